//go:build integration

package failuresuite

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sickAfter is when the sick replica's prefill slows 100×, from its
// start: time for the store to hold both replicas and the dashboard to
// watch them for the diagnosis's 30 s warm-up.
const sickAfter = 60 * time.Second

// TestSickReplicaNamedPrometheus is issue 22's replica proof against a
// real Prometheus and a real Alertmanager: two simulator replicas of one
// model, one of whose prefill slows 100×. Its diagnosis names replica with
// its TTFT against the siblings' median, in the dashboard's --json lines,
// the model row names it too, the healthy replica names none; its TTFT
// objective's alert reaches Alertmanager with the annotations cause
// (replica, or its prefill: see sickCauses), cause_summary, evidence and
// next_step.
func TestSickReplicaNamedPrometheus(t *testing.T) {
	t.Parallel()
	model := "fleet-why"
	healthy := startSim(t, "127.0.0.1:0", "--model", model+":1b", "--load", "2")
	sick := startSim(t, "127.0.0.1:0", "--model", model+":1b", "--load", "2",
		"--event", fmt.Sprintf("prefill_slow@%s,factor=100", sickAfter))
	dir := t.TempDir()
	prom := startPrometheusConfig(t, writeFile(t, dir, "scrape.yml", fleetScrapeConfig(healthy.addr, sick.addr)))
	am := startAlertmanager(t)
	cfg := writeFile(t, dir, "ttftop.yaml", fmt.Sprintf("prometheus:\n  - url: %s\n    interval: %s\n", prom.url, replicaRefresh))
	hl := startHeadless(t, "dashboard", "--config", cfg, "--refresh", replicaView.String(), "--webhook", am.webhookURL(),
		"--slo-ttft", "150ms", "--slo-window", "20s", "--slo-for", "3s")
	repOK, repSick := healthy.addr+"/"+model, sick.addr+"/"+model

	faultAt := sick.launched.Add(sickAfter)
	named := func(d snapshotDoc, endpoint, cause string) *findingDoc {
		for _, ep := range d.Endpoints {
			if ep.Name != endpoint || ep.Diagnosis == nil {
				continue
			}
			for i, f := range ep.Diagnosis.Causes {
				if f.Cause == cause {
					return &ep.Diagnosis.Causes[i]
				}
			}
		}
		return nil
	}
	seen := watch(firingWait, faultAt,
		observation{"json_replica_after", docSeen(hl, faultAt, func(d snapshotDoc) bool {
			return named(d, repSick, "replica") != nil && named(d, model, "replica") != nil
		})},
		observation{"am_cause_after", func() (time.Time, bool) {
			a, err := am.withCause(repSick, model, faultAt, sickCauses...)
			return time.Now(), err == nil && a != nil
		}})
	requireWithin(t, "sick replica named", firingWait, seen, "json_replica_after", "am_cause_after")

	if r, ok := hl.waitDoc(faultAt, time.Second, func(d snapshotDoc) bool { return named(d, repSick, "replica") != nil }); ok {
		f := named(r.doc, repSick, "replica")
		bySiblings := false
		for _, e := range f.Evidence {
			bySiblings = bySiblings || (e.BaselineFrom == "siblings" && e.Baseline != nil && e.Value >= 2**e.Baseline)
		}
		if !bySiblings {
			t.Errorf("replica named without a figure at twice its siblings' median: %+v", f.Evidence)
		}
		if f.Next == "" {
			t.Errorf("replica named without a next step: %+v", f)
		}
	}
	// The healthy replica names no cause, before the fault and after.
	for _, r := range hl.all() {
		for _, ep := range r.doc.Endpoints {
			if ep.Name == repOK && ep.Diagnosis != nil && len(ep.Diagnosis.Causes) > 0 &&
				ep.Diagnosis.Causes[0].Cause != "none" && ep.Diagnosis.Causes[0].Cause != "unclear" {
				t.Errorf("the healthy replica names %s at %s", ep.Diagnosis.Causes[0].Cause, r.doc.At.Format(time.TimeOnly))
			}
		}
	}
	if a, err := am.withCause(repSick, model, faultAt, sickCauses...); err != nil || a == nil {
		t.Errorf("no alert with cause %v in Alertmanager (%v); it holds %+v", sickCauses, err, am.all(t))
	} else {
		for _, k := range []string{"cause_summary", "evidence", "next_step"} {
			if strings.TrimSpace(a.Annotations[k]) == "" {
				t.Errorf("the alert in Alertmanager lacks %s: %v", k, a.Annotations)
			}
		}
		if want := map[string]string{"replica": "(siblings)", "prefill": "prefill_time_ms"}[a.Annotations["cause"]]; !strings.Contains(a.Annotations["evidence"], want) {
			t.Errorf("%s evidence %q does not say %s", a.Annotations["cause"], a.Annotations["evidence"], want)
		}
		t.Logf("in Alertmanager: %s %s: cause %s; %s; evidence %s; next %s", a.Labels["alertname"], a.Labels["endpoint"],
			a.Annotations["cause"], a.Annotations["cause_summary"], a.Annotations["evidence"], a.Annotations["next_step"])
	}
	measured(t, "sick-replica prometheus", seen, "json_replica_after", "am_cause_after")
}

// sickCauses are what the sick replica's alert may be sent with: an alert
// carries the diagnosis of the evaluation that made it fire (re-sends
// keep it), and the replica's own prefill can be named, from its own
// baselines, before its 30 s window holds enough to set it far from its
// sibling.
var sickCauses = []string{"replica", "prefill"}

// withCause is the first active alert on endpoint or model, begun after
// from, whose cause annotation is one of causes.
func (a *alertmanager) withCause(endpoint, model string, from time.Time, causes ...string) (*amAlert, error) {
	list, err := a.alerts()
	if err != nil {
		return nil, err
	}
	for i, al := range list {
		if (al.Labels["endpoint"] == endpoint || al.Labels["endpoint"] == model) && al.Status.State == "active" &&
			al.StartsAt.After(from) && slices.Contains(causes, al.Annotations["cause"]) {
			return &list[i], nil
		}
	}
	return nil, nil
}

// all is what Alertmanager holds, for a failure message.
func (a *alertmanager) all(t *testing.T) []amAlert {
	list, err := a.alerts()
	if err != nil {
		t.Logf("GET /api/v2/alerts: %v", err)
	}
	return list
}
