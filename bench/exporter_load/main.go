// Command exporter_load feeds an exporter the observations of N endpoints
// probed every interval, with the rates and shapes the probe Runner emits
// (announcement, samples, 63 ITL gaps, probe record, live text, source
// status), and serves /metrics, so bench/exporter_load.sh can measure the
// CPU and memory an exporter process needs. It stands in for
// `ttftop exporter` until that command is wired.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ttftop/ttftop/exporter"
	"github.com/ttftop/ttftop/telemetry"
)

func main() {
	endpoints := flag.Int("endpoints", 100, "endpoints to simulate")
	interval := flag.Duration("interval", 5*time.Second, "probe interval per endpoint")
	tokens := flag.Int("tokens", 64, "output tokens per probe (tokens-1 ITL gaps)")
	failRate := flag.Float64("fail", 0.02, "fraction of probes that fail")
	listen := flag.String("listen", "127.0.0.1:9464", "exporter listen address")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := exporter.New(exporter.Options{ProbeInterval: *interval})
	var wg sync.WaitGroup
	for i := 0; i < *endpoints; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			feed(ctx, e, i, *interval, *tokens, *failRate)
		}()
	}
	log.Printf("exporter_load: %d endpoints every %s, serving http://%s/metrics", *endpoints, *interval, *listen)
	err := e.Serve(ctx, *listen)
	stop()
	wg.Wait()
	if err != nil {
		log.Fatal(err)
	}
}

// feed emits one endpoint's observations until ctx ends, starting at a
// random offset so endpoints do not probe in lockstep (the Runner jitters).
func feed(ctx context.Context, sink telemetry.Sink, i int, interval time.Duration, tokens int, failRate float64) {
	rng := rand.New(rand.NewPCG(uint64(i), 42))
	name := fmt.Sprintf("10.0.%d.%d:8000/meta-llama/Llama-3.1-8B-Instruct", i/250, i%250)
	src := "probe:http://" + name[:len(name)-len("/meta-llama/Llama-3.1-8B-Instruct")] + "/v1/chat/completions"
	ep := telemetry.Endpoint{Name: name, Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: telemetry.EngineVLLM}
	sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: time.Now(), Endpoint: name, Source: src, Interval: interval, Info: &ep})
	timer := time.NewTimer(time.Duration(rng.Int64N(int64(interval))))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(interval)
		emitProbe(sink, rng, name, src, interval, tokens, rng.Float64() < failRate)
	}
}

func emitProbe(sink telemetry.Sink, rng *rand.Rand, name, src string, interval time.Duration, tokens int, fail bool) {
	now := time.Now()
	obs := func(kind telemetry.Kind, sig telemetry.Signal, v float64) telemetry.Observation {
		return telemetry.Observation{Kind: kind, At: now, Endpoint: name, Signal: sig, Source: src, Value: v, Interval: interval}
	}
	// Live text: the Runner sends at most 10 updates a second for one
	// probe at a time; a 1.2 s answer gives about a dozen.
	for k := 0; k < 12; k++ {
		o := obs(telemetry.KindLiveText, "", 0)
		o.Live = &telemetry.LiveText{Text: "The quick brown fox jumps over the lazy dog.", Tokens: k * 5}
		sink.Observe(o)
	}
	var rec telemetry.ProbeRecord
	if fail {
		sink.Observe(obs(telemetry.KindSample, telemetry.ProbeSuccess, 0))
		f := obs(telemetry.KindFailure, "", 0)
		f.Err = "timeout: no token within 30s"
		sink.Observe(f)
		rec = telemetry.ProbeRecord{OK: false, ErrorKind: "timeout", Error: "no token within 30s"}
	} else {
		ttft := 0.08 + rng.ExpFloat64()*0.05
		itl := make([]float64, tokens-1)
		var sum float64
		for k := range itl {
			itl[k] = 0.012 + rng.Float64()*0.006
			sum += itl[k]
		}
		tpot := sum / float64(tokens-1)
		sink.Observe(obs(telemetry.KindSample, telemetry.TTFT, ttft))
		sink.Observe(obs(telemetry.KindSample, telemetry.TPOT, tpot))
		sink.Observe(obs(telemetry.KindSample, telemetry.E2E, ttft+sum))
		sink.Observe(obs(telemetry.KindSample, telemetry.OutputTPS, 1/tpot))
		rec = telemetry.ProbeRecord{OK: true, TTFTms: ttft * 1000, TPOTms: tpot * 1000, E2Ems: (ttft + sum) * 1000, OutputTokens: tokens, TokensSource: "usage"}
		for _, g := range itl {
			sink.Observe(obs(telemetry.KindSample, telemetry.ITL, g))
			rec.ITLms = append(rec.ITLms, g*1000)
		}
		sink.Observe(obs(telemetry.KindSample, telemetry.ProbeSuccess, 1))
	}
	p := obs(telemetry.KindProbe, "", 0)
	p.Probe = &rec
	sink.Observe(p)
	st := obs(telemetry.KindSource, "", 0)
	st.Status = &telemetry.SourceStatus{Name: src, Kind: telemetry.SourceProbe, State: telemetry.Live, LastOK: now}
	sink.Observe(st)
}
