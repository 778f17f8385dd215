package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tokentop/tokentop/sources/probe"
)

// probedMap stands for the monitor's probed endpoints.
func probedMap(names ...string) probedAs {
	m := map[string]probe.Options{}
	for i, n := range names {
		m[n] = probe.Options{URL: fmt.Sprintf("http://127.0.0.1:%d", 9000+i), Model: "m" + n, Headers: []probe.Header{{Name: "X-Team", Value: "k"}}}
	}
	return func(ep string) (probe.Options, bool) { o, ok := m[ep]; return o, ok }
}

// The dashboard's race: probed endpoints race in the order given with
// their own probe options and the race's prompt and tokens; the others
// are said, and fewer than two probed is no race.
func TestDashboardRacerPrepare(t *testing.T) {
	racer, err := newDashboardRacer(probedMap("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	r, notes, err := racer.Prepare([]string{"b", "scraped", "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lanes := r.Lanes()
	if len(lanes) != 2 || lanes[0].Name != "b" || lanes[1].Name != "a" || lanes[0].Label != "A" {
		t.Fatalf("lanes %+v; want b then a", lanes)
	}
	ps := r.(*dashboardRace).probers
	if ps[0].Model() != "mb" || ps[0].Options().MaxTokens != dashboardRaceTokens || len(ps[0].Options().Headers) != 1 ||
		!strings.Contains(ps[0].Options().Prompt, "travel guide") {
		t.Errorf("racer b's options %+v: want its probe's model and key, the race's prompt and tokens", ps[0].Options())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "not probed") || !strings.Contains(notes[0], "scraped") {
		t.Errorf("notes %q: want the unprobed endpoint said", notes)
	}
	if !strings.Contains(r.Title(), fmt.Sprintf("max %d tokens", dashboardRaceTokens)) {
		t.Errorf("title %q", r.Title())
	}

	if _, _, err := racer.Prepare([]string{"a", "scraped"}); err == nil || !strings.Contains(err.Error(), "not probed: scraped") {
		t.Errorf("one probed endpoint: err %v, want no race and the unprobed one named", err)
	}
}

// At most maxRacers race; the rest are said.
func TestDashboardRacerBound(t *testing.T) {
	var names []string
	for i := range maxRacers + 2 {
		names = append(names, fmt.Sprintf("e%d", i))
	}
	racer, err := newDashboardRacer(probedMap(names...))
	if err != nil {
		t.Fatal(err)
	}
	r, notes, err := racer.Prepare(names)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Lanes()) != maxRacers || len(notes) != 1 || !strings.HasPrefix(notes[0], names[maxRacers]+" and the rest") {
		t.Errorf("%d lanes, notes %q; want %d and the rest said", len(r.Lanes()), notes, maxRacers)
	}
}
