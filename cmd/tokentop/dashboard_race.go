package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/tokentop/tokentop/internal/race"
	"github.com/tokentop/tokentop/sources/probe"
	"github.com/tokentop/tokentop/tui"
	"github.com/tokentop/tokentop/tui/raceview"
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
}

func newDashboardRacer(probed probedAs) (tui.Racer, error) {
	prompt, err := loadProbePrompt(dashboardRacePrompt, "")
	if err != nil {
		return nil, err
	}
	return dashboardRacer{probed: probed, prompt: prompt}, nil
}

// Prepare implements tui.Racer: one prober per probed endpoint among
// names (maxRacers at most); the others are said in notes.
func (d dashboardRacer) Prepare(names []string) (tui.Race, []string, error) {
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
	return r, notes, nil
}

// dashboardRace is a prepared race of the dashboard's endpoints.
type dashboardRace struct {
	probers []*probe.Prober
	lanes   []raceview.Lane
	title   string
}

func (r *dashboardRace) Lanes() []raceview.Lane { return r.lanes }
func (r *dashboardRace) Title() string          { return r.title }

// Run implements tui.Race with the race command's core.
func (r *dashboardRace) Run(ctx context.Context, send func(tea.Msg)) raceview.Ended {
	rd := race.Run(ctx, r.probers, viewHooks(send))
	return raceview.Ended{StartSkew: rd.StartSkew, Positions: rd.Positions}
}

func (r *dashboardRace) Close() {
	for _, p := range r.probers {
		p.Close()
	}
}
