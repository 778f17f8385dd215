package monitor

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/slo/notify"
	"github.com/ttftop/ttftop/telemetry"
)

// kvFullMonitor breaches its TPOT objective while the engine's KV cache
// is 97 % full with requests waiting: the diagnosis names kv_cache (a
// documented ratio, no baseline to warm).
func kvFullMonitor() *Monitor {
	m := firingMonitor()
	now := time.Now()
	for sig, v := range map[telemetry.Signal]float64{telemetry.KVCache: 0.97, telemetry.Waiting: 6} {
		m.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: "ep", Signal: sig,
			Value: v, Source: "scrape:x", Interval: time.Second})
	}
	return m
}

// The webhook's Alertmanager alert and the on-alert command's JSON carry
// the firing alert's cause and evidence, as the monitor diagnosed it at
// the same evaluation; the webhook's re-send keeps them.
func TestNotificationsCarryTheCause(t *testing.T) {
	var mu sync.Mutex
	var posts [][]notify.AMAlert
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var as []notify.AMAlert
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(body, &as)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		posts = append(posts, as)
		mu.Unlock()
	}))
	defer ts.Close()
	out := filepath.Join(t.TempDir(), "event.json")
	m := kvFullMonitor()
	nt, err := m.AddNotifications(config.Notify{Webhook: &config.Webhook{URL: ts.URL},
		OnAlert: []string{"sh", "-c", `cat > "$0"`, out}},
		NotifyOptions{ResendTick: 5 * time.Millisecond, ResendEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if trs := m.EvaluateNow(); len(trs) != 1 || trs[0].To != slo.Firing {
		t.Fatalf("transitions %+v", trs)
	}
	waitFor(t, "a re-send", func() bool { mu.Lock(); defer mu.Unlock(); return len(posts) >= 2 })
	if err := nt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, as := range posts[:2] {
		if len(as) != 1 {
			t.Fatalf("post %d: %+v", i, as)
		}
		an := as[0].Annotations
		if an["cause"] != "kv_cache" || !strings.Contains(an["evidence"], "kv_cache value 97% vs 90% (ratio)") ||
			!strings.Contains(an["next_step"], "max_num_seqs") {
			t.Errorf("post %d annotations: %v", i, an)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ev notify.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Cause != "kv_cache" || !strings.Contains(ev.Evidence, "97%") || ev.Why == nil || ev.Why.Next == "" {
		t.Errorf("on-alert event: %s", b)
	}
}
