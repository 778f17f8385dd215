//go:build unix

// Command promql_fleet measures PromQL mode at fleet scale: -serve N runs
// a stand-in Prometheus API (its own process) answering the default
// queries for N vLLM endpoints; -run points a promql.Source feeding a
// telemetry.Store at it, with a 1 h window on screen, and prints: the
// first refresh (the backfill of the window) and its requests; then, over
// -measure at -refresh, the process's CPU (getrusage), its peak RSS, and
// the requests per refresh (counted by the server). Each refresh is
// followed by one Snapshot, as a view reads it. Driven by
// bench/promql_fleet.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/telemetry"
)

func main() {
	serve := flag.Int("serve", 0, "serve a fleet of this many endpoints; write the URL to -url-file")
	urlFile := flag.String("url-file", "", "file holding the server's URL")
	run := flag.Bool("run", false, "run the source against the server in -url-file")
	window := flag.Duration("window", time.Hour, "window on screen (backfilled)")
	refresh := flag.Duration("refresh", 5*time.Second, "refresh interval")
	measure := flag.Duration("measure", 60*time.Second, "CPU measurement window, after the backfill")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured window")
	backfillProfile := flag.String("backfill-profile", "", "write a CPU profile of the backfill")
	heapProfile := flag.String("heap-profile", "", "write a heap profile after the backfill")
	flag.Parse()
	var err error
	switch {
	case *serve > 0:
		err = serveFleet(*serve, *urlFile)
	case *run:
		err = runSource(*urlFile, *window, *refresh, *measure, *backfillProfile, *cpuprofile, *heapProfile)
	default:
		err = fmt.Errorf("need -serve N or -run")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "promql_fleet:", err)
		os.Exit(1)
	}
}

func serveFleet(n int, urlFile string) error {
	f := &fleet{n: n, started: time.Now().Add(-time.Hour)}
	url, err := f.listen()
	if err != nil {
		return err
	}
	if err := os.WriteFile(urlFile, []byte(url+"\n"), 0o600); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// serverStats returns the requests and range points the server answered.
func serverStats(url string) (requests, points int64, err error) {
	resp, err := http.Get(url + "/stats")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	_, err = fmt.Sscan(string(b), &requests, &points)
	return requests, points, err
}

func cpuTime() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss // Maxrss in KiB on Linux
}

// startProfile starts a CPU profile into path ("" = none); stop ends it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	pf, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// chartedFromStart counts the endpoints whose output tok/s chart has a
// point in the window's first tenth: value history reached back there.
func chartedFromStart(store *telemetry.Store, snap telemetry.Snapshot, window time.Duration) int {
	n := 0
	for _, ep := range snap.Endpoints {
		pts := store.Series(ep.Name, telemetry.OutputTPS, snap.At, window, 10)
		if len(pts) > 0 && !math.IsNaN(pts[0]) {
			n++
		}
	}
	return n
}

// currentRSS reads VmRSS from /proc/self/status, in MiB ("?" elsewhere).
func currentRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb float64
			if _, err := fmt.Sscan(f[1], &kb); err == nil {
				return fmt.Sprintf("%.0f", kb/1024)
			}
		}
	}
	return "?"
}

func runSource(urlFile string, window, refresh, measure time.Duration, backfillProfile, cpuprofile, heapProfile string) error {
	raw, err := os.ReadFile(urlFile)
	if err != nil {
		return err
	}
	url := strings.TrimSpace(string(raw))
	store := telemetry.NewStore(telemetry.StoreConfig{})
	src, err := promql.New(promql.Config{URL: url, Refresh: refresh, MaxEndpoints: 5000}, store)
	if err != nil {
		return err
	}
	ctx := context.Background()
	src.WindowChanged(window)

	req0, pts0, err := serverStats(url)
	if err != nil {
		return err
	}
	stop, err := startProfile(backfillProfile)
	if err != nil {
		return err
	}
	began := time.Now()
	cpuBefore, _ := cpuTime()
	if err := src.RefreshOnce(ctx); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	backfill := time.Since(began)
	cpuAfter, _ := cpuTime()
	stop()
	req1, pts1, err := serverStats(url)
	if err != nil {
		return err
	}
	snap := store.Snapshot(time.Now(), window)
	var filled, partial int
	for _, ep := range snap.Endpoints {
		if s, ok := ep.Signals[telemetry.TTFT]; ok && s.Count > 0 {
			filled++
			if !s.DataSince.IsZero() {
				partial++
			}
		}
	}
	runtime.GC()
	if heapProfile != "" {
		hf, err := os.Create(heapProfile)
		if err != nil {
			return err
		}
		err = pprof.WriteHeapProfile(hf)
		hf.Close()
		if err != nil {
			return err
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("backfill of %s: %.2fs (source's cpu %.2fs), %d requests, %d range points; %d endpoints, %d with TTFT over the window (%d partly filled), %d with output tok/s charted from the window's start; live heap after GC %.0f MiB\n",
		window, backfill.Seconds(), (cpuAfter - cpuBefore).Seconds(), req1-req0, pts1-pts0, len(snap.Endpoints), filled, partial,
		chartedFromStart(store, snap, window), float64(ms.HeapAlloc)/(1<<20))

	// Steady state: refresh every interval, each followed by a snapshot.
	t := time.NewTicker(refresh)
	defer t.Stop()
	stop, err = startProfile(cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	cpu0, _ := cpuTime()
	wall0 := time.Now()
	var perRefresh []int64
	prev := req1
	for time.Since(wall0) < measure {
		<-t.C
		if err := src.RefreshOnce(ctx); err != nil {
			return fmt.Errorf("refresh: %w", err)
		}
		_ = store.Snapshot(time.Now(), window)
		req, _, err := serverStats(url)
		if err != nil {
			return err
		}
		perRefresh = append(perRefresh, req-prev) // /stats itself is not counted
		prev = req
	}
	cpu1, rss := cpuTime()
	now := currentRSS()
	wall := time.Since(wall0)
	sort.Slice(perRefresh, func(i, j int) bool { return perRefresh[i] < perRefresh[j] })
	fmt.Printf("steady: %d refreshes at %s over %.0fs: cpu %.2fs => %.2f%% of one core; peak RSS %.0f MiB (during the backfill), RSS at the end %s MiB; requests per refresh min %d median %d max %d\n",
		len(perRefresh), refresh, wall.Seconds(), (cpu1 - cpu0).Seconds(), 100*(cpu1-cpu0).Seconds()/wall.Seconds(),
		float64(rss)/1024, now, perRefresh[0], perRefresh[len(perRefresh)/2], perRefresh[len(perRefresh)-1])
	return nil
}
