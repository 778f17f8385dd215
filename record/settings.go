package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Settings are what decided what a live session showed: the objectives as
// its SLO engine judged them, the engine's options, the store's
// configuration and the view's window and refresh. A recording carries
// them in "settings" lines at its start, so that a replay judges and shows
// what live did. Each part is nil when the recorder did not say.
type Settings struct {
	SLO   *SLOSettings           `json:"slo,omitempty"`
	Store *telemetry.StoreConfig `json:"store,omitempty"`
	View  *ViewSettings          `json:"view,omitempty"`
}

// SLOSettings are the live SLO engine's.
type SLOSettings struct {
	// Objectives as the engine used them: completed, and already scaled by
	// Options.Scale (a replay must not scale them again). Empty with
	// --no-slo.
	Objectives []slo.Objective `json:"objectives"`
	Options    slo.Options     `json:"options"`
	// EvalEvery is how often live evaluated the objectives.
	EvalEvery time.Duration `json:"eval_every,omitempty"`
}

// ViewSettings are the live view's.
type ViewSettings struct {
	Window  time.Duration `json:"window,omitempty"`
	Refresh time.Duration `json:"refresh,omitempty"`
}

// merge lays the parts n gives over s.
func (s *Settings) merge(n Settings) {
	if n.SLO != nil {
		s.SLO = n.SLO
	}
	if n.Store != nil {
		s.Store = n.Store
	}
	if n.View != nil {
		s.View = n.View
	}
}

// errSettingsLate: settings are read from the start of a recording only.
var errSettingsLate = errors.New("record: settings must be written before the first observation")

// WriteSettings records s as a settings line. It must come before the
// first observation or alert (readers look for settings in the recording's
// first segment only, so they need not read further to know how to judge
// it); several calls add parts (SLO, then the view's), the later ones
// replacing the same parts of the earlier.
func (w *Writer) WriteSettings(s Settings) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("record: encode settings: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("record: writer closed")
	}
	if w.seq > 0 {
		return errSettingsLate
	}
	w.settings.merge(s)
	w.state.resolvedMax = alertHistoryOf(w.settings)
	w.appendLine(line{Observation: telemetry.Observation{Kind: kindSettings, At: time.Now().UTC()}, Settings: raw})
	return w.err
}

// alertHistoryOf is how many resolved alerts a segment preamble repeats:
// at least as many as the engine keeps, so that a replay starting at any
// segment has the alert history live had.
func alertHistoryOf(s Settings) int {
	const engineDefault = 100 // slo.Options.History's default
	if s.SLO != nil && s.SLO.Options.History > engineDefault {
		return s.SLO.Options.History
	}
	return engineDefault
}

// ReadSettings returns the settings a recording starts with, and whether
// it has any (recordings of ttftop before format version 2 have none).
// It reads only the start of the file.
func ReadSettings(path string) (Settings, bool, error) {
	r, err := Open(path)
	if err != nil {
		return Settings{}, false, err
	}
	defer func() {
		// Read-only: a close error loses nothing.
		_ = r.Close()
	}()
	// Settings come before the first entry; reading one reads them.
	if _, err := r.NextEntry(); err != nil && !errors.Is(err, io.EOF) && !isDamage(err) {
		return Settings{}, false, err
	}
	return r.settings, r.hasSettings, r.settingsErr
}
