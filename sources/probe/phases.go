package probe

import (
	"math"
	"time"
)

// Phases are the figures of a stream that thinks before it answers: the
// answer (content and tool calls) is what a chat user waits for, the
// reasoning comes first. A stream without reasoning has one phase, the
// answer, so its TTFA is its TTFT.
type Phases struct {
	// TTFA is the time to the first answer token: the first token-bearing
	// event carrying answer text or a tool call − start.
	TTFA      time.Duration
	HasAnswer bool
	// FirstTool is the time to the first tool-call token (arguments).
	FirstTool time.Duration
	HasTool   bool
	// Reasoning and Answer are the output tokens of each phase (they sum
	// to n), known when Split: the server counted the reasoning tokens,
	// every event was reasoning, or the stream's tokens per event are
	// known (TokensSource usage/engine); else n is shared in proportion
	// to each phase's events, an estimate (TokensSource events). Without
	// reasoning shown or counted, Split is false: Answer is then n and
	// Reasoning unknown (a model may reason without streaming it).
	Reasoning, Answer int
	Split             bool
	TokensSource      TokenSource
	// Phase TPOT: (last − first event of the phase) / (its tokens − 1),
	// for two or more events and tokens, when the phase's events are not
	// interleaved with the other's.
	ReasoningTPOT, AnswerTPOT       time.Duration
	HasReasoningTPOT, HasAnswerTPOT bool
}

// Approx reports that the phase token counts (and so the phase TPOTs)
// are estimates.
func (p Phases) Approx() bool { return p.TokensSource == TokensEvents }

// phaseRun is where one phase's events lie.
type phaseRun struct {
	first, last int // event indices; first < 0: none
	events      int
	tokens      int // from TokensPerEvent, when known
	interleaved bool
}

// Phases computes the phase figures; the zero value for a failed result.
// An event carrying both reasoning and answer text (the chunk where the
// answer starts) belongs to the answer.
func (r *Result) Phases() Phases {
	var ph Phases
	if !r.OK || len(r.EventParts) != len(r.EventOffsets) || len(r.EventOffsets) == 0 {
		return ph
	}
	reasoning, answer := phaseRun{first: -1}, phaseRun{first: -1}
	perEvent := len(r.TokensPerEvent) == len(r.EventOffsets)
	firstTool := -1
	for i, p := range r.EventParts {
		run := &reasoning
		if p&(PartAnswer|PartTool) != 0 {
			run = &answer
		}
		if p&PartTool != 0 && firstTool < 0 {
			firstTool = i
		}
		if run.first < 0 {
			run.first = i
		}
		// The other phase resumes after this one had begun: interleaved.
		if run.events > 0 && run.last != i-1 {
			run.interleaved = true
		}
		run.last = i
		run.events++
		if perEvent {
			run.tokens += r.TokensPerEvent[i]
		}
	}
	if answer.first >= 0 {
		ph.TTFA, ph.HasAnswer = r.EventOffsets[answer.first], true
	}
	if firstTool >= 0 {
		ph.FirstTool, ph.HasTool = r.EventOffsets[firstTool], true
	}
	n := r.OutputTokens
	switch {
	case r.HasReasoningReported && r.ReasoningReported <= n:
		ph.Reasoning, ph.Answer, ph.Split, ph.TokensSource = r.ReasoningReported, n-r.ReasoningReported, true, r.TokensSource
	case reasoning.events == 0:
		ph.Answer, ph.TokensSource = n, r.TokensSource
	case answer.events == 0: // all reasoning: every output token is
		ph.Reasoning, ph.Split, ph.TokensSource = n, true, r.TokensSource
	case perEvent && r.TokensSource != TokensEvents:
		ph.Reasoning, ph.Answer, ph.Split, ph.TokensSource = reasoning.tokens, n-reasoning.tokens, true, r.TokensSource
	default:
		// n shared in proportion to each phase's events: exact for one
		// token per event, an estimate otherwise.
		rn := int(math.Round(float64(n) * float64(reasoning.events) / float64(len(r.EventParts))))
		ph.Reasoning, ph.Answer, ph.Split, ph.TokensSource = rn, n-rn, true, TokensEvents
	}
	tpot := func(run phaseRun, tokens int) (time.Duration, bool) {
		if run.events < 2 || tokens < 2 || run.interleaved {
			return 0, false
		}
		span := r.EventOffsets[run.last] - r.EventOffsets[run.first]
		if span <= 0 {
			return 0, false
		}
		return span / time.Duration(tokens-1), true
	}
	if ph.Split {
		ph.ReasoningTPOT, ph.HasReasoningTPOT = tpot(reasoning, ph.Reasoning)
	}
	ph.AnswerTPOT, ph.HasAnswerTPOT = tpot(answer, ph.Answer)
	return ph
}
