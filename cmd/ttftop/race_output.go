package main

// race's outputs without a terminal: a text result per round, a summary
// of several rounds, and --json.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ttftop/ttftop/internal/race"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/raceview"
)

// finishedOf is a racer's result as the view shows it.
func finishedOf(i int, r *probe.Result) raceview.Finished {
	f := raceview.Finished{Racer: i, OK: r.OK, Err: string(r.ErrorKind) + ": " + r.Err, TTFT: r.TTFT, E2E: r.E2E,
		Tokens: r.OutputTokens, Approx: r.Approx()}
	f.TPOT, f.HasTPOT = r.TPOT()
	return f
}

// chunkOf is a streamed event as the view draws it, sanitised here where
// the network's text enters the view.
func chunkOf(c race.Chunk) raceview.Chunk {
	part := raceview.Answer
	switch {
	case c.Progress.Parts&probe.PartTool != 0:
		part = raceview.Tool
	case c.Progress.Parts&probe.PartReasoning != 0 && c.Progress.Parts&probe.PartAnswer == 0:
		part = raceview.Reasoning
	}
	return raceview.Chunk{Racer: c.Racer, Text: sanitize.Multiline(c.Progress.Fragment, 0), Part: part,
		At: c.Progress.At, TTFT: c.Progress.TTFT, Tokens: c.Progress.Tokens}
}

// raceLanes names the lanes: the model alone when every racer is on one
// server, else host/model.
func raceLanes(probers []*probe.Prober) []raceview.Lane {
	oneHost := true
	for _, p := range probers {
		oneHost = oneHost && p.Host() == probers[0].Host()
	}
	lanes := make([]raceview.Lane, len(probers))
	for i, p := range probers {
		name := racerName(p)
		if oneHost {
			name = p.Model()
		}
		lanes[i] = raceview.Lane{Label: abLabel(i), Name: name}
	}
	return lanes
}

// raceResultLines is a round's result as the view's footer says it.
func raceResultLines(probers []*probe.Prober, rd race.Round) []string {
	fins := make([]*raceview.Finished, len(rd.Results))
	for i, r := range rd.Results {
		f := finishedOf(i, r)
		fins[i] = &f
	}
	return raceview.Result(raceLanes(probers), fins, rd.Positions)
}

// skewText says how far apart the requests started.
func skewText(rd race.Round) string {
	s := fmt.Sprintf("requests started %.2f ms apart (latest − earliest request start, client clock)", ms(rd.StartSkew))
	for i, err := range rd.WarmErrors {
		if err != nil {
			s += fmt.Sprintf("; %s: warming its connection failed (%s)", abLabel(i), sanitize.Text(err.Error()))
		}
	}
	return s
}

// writeRaceRound prints round i: the racers (first round only), how far
// apart they started, and the result.
func writeRaceRound(w io.Writer, probers []*probe.Prober, i int, rd race.Round) error {
	var b strings.Builder
	if i == 0 {
		for k, p := range probers {
			fmt.Fprintf(&b, "%s  %s  (%s)\n", abLabel(k), racerName(p), p.API())
		}
	}
	fmt.Fprintf(&b, "\nround %d: %s\n", i+1, skewText(rd))
	for _, line := range raceResultLines(probers, rd) {
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// raceSummaryOf sums up the rounds with the A/B comparison's own maths:
// each racer's figures over the rounds, and each racer against the first
// with its intervals (from abMinPaired rounds in which both finished).
func raceSummaryOf(probers []*probe.Prober, rounds []race.Round) raceSummaryJSON {
	results := make([][]*probe.Result, len(probers))
	wins := make([]int, len(probers))
	for _, rd := range rounds {
		for i, r := range rd.Results {
			results[i] = append(results[i], r)
			if rd.Positions[i] == 1 {
				wins[i]++
			}
		}
	}
	rep := abReport(probers, results, false, 0.95)
	return raceSummaryJSON{Rounds: len(rounds), Wins: wins, CIMethod: rep.CIMethod, CILevel: rep.CILevel,
		Racers: rep.Endpoints, Comparisons: rep.Comparisons}
}

// raceSummaryText is the summary as text (printed, and below the lanes).
func raceSummaryText(probers []*probe.Prober, rounds []race.Round) (string, error) {
	s := raceSummaryOf(probers, rounds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds:", s.Rounds)
	for i, e := range s.Racers {
		fmt.Fprintf(&b, "\n%s  wins %d  medians: TTFT %s ms  TPOT %s ms  E2E %s ms  (completed %d, failed %d)",
			e.Label, s.Wins[i], figure(e.Figures, "ttft_p50_ms"), figure(e.Figures, "tpot_p50_ms"), figure(e.Figures, "e2e_p50_ms"), e.Completed, e.Failed)
	}
	b.WriteString("\n")
	if err := writeABComparisons(&b, abReportJSON{CILevel: s.CILevel, CIMethod: s.CIMethod, Comparisons: s.Comparisons}); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func figure(f map[string]float64, name string) string {
	v, ok := f[name]
	if !ok {
		return "-"
	}
	return num(&v)
}

func writeRaceSummary(w io.Writer, probers []*probe.Prober, rounds []race.Round) error {
	text, err := raceSummaryText(probers, rounds)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n"+text+"\n\n(client-side probe figures; definitions: ttftop probe --help, docs/definitions.md)\n")
	return err
}

// raceJSON is what `race --json` prints: one document.
type raceJSON struct {
	Schema      string           `json:"schema"`
	MaxTokens   int              `json:"max_tokens"`
	PromptChars int              `json:"prompt_chars"`
	Racers      []raceRacerJSON  `json:"racers"`
	Rounds      []raceRoundJSON  `json:"rounds"`
	Summary     *raceSummaryJSON `json:"summary,omitempty"` // with more than one round
}

type raceRacerJSON struct {
	Label  string `json:"label"`
	Target string `json:"target"` // the stream URL, credentials and query removed
	API    string `json:"api"`
	Model  string `json:"model"`
}

type raceRoundJSON struct {
	Round       int              `json:"round"`
	StartSkewMS float64          `json:"start_skew_ms"`
	Results     []raceResultJSON `json:"results"`
}

// raceResultJSON is one racer in one round. A failed request has no
// position and no latencies (null), never zeros.
type raceResultJSON struct {
	Label        string   `json:"label"`
	Target       string   `json:"target"`
	OK           bool     `json:"ok"`
	Position     *int     `json:"position"`
	TTFTms       *float64 `json:"ttft_ms"`
	TPOTms       *float64 `json:"tpot_ms"` // null for one token
	E2Ems        *float64 `json:"e2e_ms"`
	OutputTokens int      `json:"output_tokens"`
	TokensSource string   `json:"tokens_source"`
	ErrorKind    string   `json:"error_kind,omitempty"`
	Error        string   `json:"error,omitempty"`
}

type raceSummaryJSON struct {
	Rounds      int                `json:"rounds"`
	Wins        []int              `json:"wins"` // by racer
	CIMethod    string             `json:"ci_method"`
	CILevel     float64            `json:"ci_level_ratio"`
	Racers      []abEndpointJSON   `json:"racers"`
	Comparisons []abComparisonJSON `json:"comparisons"`
}

func raceDocument(cfg raceConfig, probers []*probe.Prober, rounds []race.Round) raceJSON {
	doc := raceJSON{Schema: telemetry.JSONSchema, MaxTokens: cfg.opts.MaxTokens, PromptChars: len(cfg.opts.Prompt), Rounds: []raceRoundJSON{}}
	for i, p := range probers {
		doc.Racers = append(doc.Racers, raceRacerJSON{Label: abLabel(i), Target: p.URL(), API: string(p.API()), Model: p.Model()})
	}
	for k, rd := range rounds {
		rj := raceRoundJSON{Round: k + 1, StartSkewMS: ms(rd.StartSkew)}
		for i, r := range rd.Results {
			j := raceResultJSON{Label: abLabel(i), Target: probers[i].URL(), OK: r.OK, OutputTokens: r.OutputTokens,
				TokensSource: string(r.TokensSource), ErrorKind: string(r.ErrorKind), Error: r.Err}
			if r.OK {
				pos := rd.Positions[i]
				j.Position, j.TTFTms, j.E2Ems = &pos, ptr(ms(r.TTFT)), ptr(ms(r.E2E))
				if tpot, ok := r.TPOT(); ok {
					j.TPOTms = ptr(ms(tpot))
				}
			}
			rj.Results = append(rj.Results, j)
		}
		doc.Rounds = append(doc.Rounds, rj)
	}
	if len(rounds) > 1 {
		s := raceSummaryOf(probers, rounds)
		doc.Summary = &s
	}
	return doc
}

func writeRaceJSON(w io.Writer, cfg raceConfig, probers []*probe.Prober, rounds []race.Round) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(raceDocument(cfg, probers, rounds))
}
