package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/internal/race"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/tui"
	"github.com/ttftop/ttftop/tui/raceview"
)

// The dashboard's race key: the endpoints shown race with the options
// they are probed with (URL, protocol, model, headers, credentials), a
// longer prompt and more tokens than a probe asks for, so the text has
// time to stream.

// dashboardRaceTokens and dashboardRacePrompt are what each racer is
// asked (as demo --race asks).
const (
	dashboardRaceTokens = demoRaceTokens
	dashboardRacePrompt = "medium"
)

// probedAs looks up an endpoint's probe options (monitor.ProbedAs).
type probedAs func(endpoint string) (probe.Options, bool)

// dashboardRacer races the dashboard's probed endpoints.
type dashboardRacer struct {
	probed probedAs
	prompt string
	// recording is the dashboard's --record file ("" = none): each race
	// is kept beside it (raceRecordingPath) for replay.
	recording string
	races     int // races recorded so far (Prepare runs on the UI's goroutine)
}

func newDashboardRacer(probed probedAs, recording string) (tui.Racer, error) {
	prompt, err := loadProbePrompt(dashboardRacePrompt, "")
	if err != nil {
		return nil, err
	}
	return &dashboardRacer{probed: probed, prompt: prompt, recording: recording}, nil
}

// raceRecordingPath names the n-th race of a dashboard recording to
// path: session.jsonl.gz → session.race1.jsonl.gz.
func raceRecordingPath(path string, n int) string {
	base, gz := strings.CutSuffix(path, ".gz")
	base = strings.TrimSuffix(base, ".jsonl")
	p := fmt.Sprintf("%s.race%d.jsonl", base, n)
	if gz {
		p += ".gz"
	}
	return p
}

// Prepare implements tui.Racer: one prober per probed endpoint among
// names (maxRacers at most); the others are said in notes.
func (d *dashboardRacer) Prepare(names []string) (tui.Race, []string, error) {
	r := &dashboardRace{}
	var notes, unprobed []string
	for _, name := range names {
		o, ok := d.probed(name)
		if !ok {
			unprobed = append(unprobed, name)
			continue
		}
		if len(r.probers) == maxRacers {
			notes = append(notes, fmt.Sprintf("%s and the rest: not raced (%d racers at most)", name, maxRacers))
			break
		}
		o.Prompt, o.MaxTokens = d.prompt, dashboardRaceTokens
		p, err := probe.New(o)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		r.probers = append(r.probers, p)
		r.lanes = append(r.lanes, raceview.Lane{Label: abLabel(len(r.lanes)), Name: name})
	}
	if len(unprobed) > 0 {
		notes = append(notes, "not probed, so not raced (no URL and protocol to send a prompt to): "+strings.Join(unprobed, ", "))
	}
	if len(r.probers) < 2 {
		r.Close()
		why := "a race needs two probed endpoints shown (filter with / to choose them)"
		if len(unprobed) > 0 {
			why += "; not probed: " + strings.Join(unprobed, ", ")
		}
		return nil, nil, errors.New(why)
	}
	r.title = raceTitle(dashboardRaceTokens, d.prompt)
	if d.recording != "" {
		d.races++
		path := raceRecordingPath(d.recording, d.races)
		rec, err := newRaceRecorder(path, r.title, r.lanes)
		if err != nil {
			return nil, nil, errors.Join(err, r.Close())
		}
		r.rec = rec
		notes = append(notes, "recording this race to "+path+" (ttftop replay it)")
	}
	return r, notes, nil
}

// dashboardRace is a prepared race of the dashboard's endpoints.
type dashboardRace struct {
	probers []*probe.Prober
	lanes   []raceview.Lane
	title   string
	rec     *raceRecorder // nil: not recorded
	round   int
}

func (r *dashboardRace) Lanes() []raceview.Lane { return r.lanes }
func (r *dashboardRace) Title() string          { return r.title }

// Run implements tui.Race with the race command's core.
// The recording gets the round's start and end too, which the view
// is told by the dashboard.
func (r *dashboardRace) Run(ctx context.Context, send func(tea.Msg)) raceview.Ended {
	r.round++
	if r.rec != nil {
		r.rec.Record(raceview.Started{Round: r.round})
		view := send
		send = func(m tea.Msg) {
			r.rec.Record(m)
			view(m)
		}
	}
	rd := race.Run(ctx, r.probers, viewHooks(send))
	end := raceview.Ended{Round: r.round, StartSkew: rd.StartSkew, Positions: rd.Positions}
	if r.rec != nil && ctx.Err() == nil {
		r.rec.Record(end)
	}
	return end
}

// Close closes the connections and completes the recording.
func (r *dashboardRace) Close() error {
	for _, p := range r.probers {
		p.Close()
	}
	if r.rec == nil {
		return nil
	}
	return r.rec.Close()
}
