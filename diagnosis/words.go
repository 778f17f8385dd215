package diagnosis

import (
	"strings"

	fig "github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
)

// Words is one evidence entry as a person reads it: "queue_time_ms mean
// 812ms vs 40ms (own)", "~" before an estimate, the note after a colon.
// The one wording shared by the dashboard and the notifications.
func (e Evidence) Words() string {
	v := fig.Value(e.Value, e.Unit)
	if e.Approx {
		v = "~" + v
	}
	s := e.Figure + " " + e.Stat + " " + v
	if e.Baseline != nil {
		s += " vs " + fig.Value(*e.Baseline, e.Unit) + " (" + e.BaselineFrom + ")"
	}
	if e.Note != "" {
		s += ": " + e.Note
	}
	return s
}

// EvidenceWords is every evidence entry of f in words, "; " between.
func (f Finding) EvidenceWords() string {
	parts := make([]string, len(f.Evidence))
	for i, e := range f.Evidence {
		parts[i] = e.Words()
	}
	return strings.Join(parts, "; ")
}

// Named reports whether d names a cause worth showing beside an alert or a
// row: anything but healthy (an unclear call says what is missing).
func (d Diagnosis) Named() bool { return len(d.Causes) > 0 && d.Leading() != None }

// Why is d in words as a notification carries it: the leading cause, its
// evidence and next step, and the other causes named.
func (d Diagnosis) Why() *slo.Why {
	if len(d.Causes) == 0 {
		return nil
	}
	f := d.Causes[0]
	w := &slo.Why{Cause: string(f.Cause), Summary: f.Summary, Evidence: f.EvidenceWords(), Next: f.Next}
	if f.Cause == Unclear && len(f.Missing) > 0 {
		w.Evidence = "missing: " + strings.Join(f.Missing, "; ")
	}
	for _, o := range d.Causes[1:] {
		w.More = append(w.More, string(o.Cause))
	}
	return w
}
