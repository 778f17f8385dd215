//go:build unix

// Command scrape_cpu measures what direct scraping costs: -serve starts N
// HTTP targets (in their own process) serving a fixture-sized vLLM V1 page
// whose counters grow; -scrape runs N scrape.Scrapers at 1 s against them
// and prints the scraping process's CPU use from getrusage. Driven by
// bench/scrape_cpu.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

func main() {
	serve := flag.Int("serve", 0, "serve this many targets and write their URLs to -urls")
	doScrape := flag.Bool("scrape", false, "scrape the targets listed in -urls")
	urls := flag.String("urls", "", "file of target URLs, one per line")
	warmup := flag.Duration("warmup", 5*time.Second, "scrape this long before measuring")
	measure := flag.Duration("measure", 30*time.Second, "measurement window")
	interval := flag.Duration("interval", time.Second, "scrape interval")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured window")
	flag.Parse()
	var err error
	switch {
	case *serve > 0:
		err = runServers(*serve, *urls)
	case *doScrape:
		err = runScrapers(*urls, *interval, *warmup, *measure, *cpuprofile)
	default:
		err = fmt.Errorf("need -serve N or -scrape")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scrape_cpu:", err)
		os.Exit(1)
	}
}

func runServers(n int, urlFile string) error {
	// Pages are rendered once a second for all targets, so the serving
	// process stays light and never delays the scrapes being measured.
	pages := make([]atomic.Pointer[[]byte], n)
	render := func(k int) {
		for i := range pages {
			b := []byte(page(fmt.Sprintf("org/model-%02d", i), k))
			pages[i].Store(&b)
		}
	}
	render(1)
	go func() {
		for k := 2; ; k++ {
			time.Sleep(time.Second)
			render(k)
		}
	}()
	var list []string
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			_, _ = w.Write(*pages[i].Load())
		})}
		go func() { _ = srv.Serve(ln) }()
		list = append(list, "http://"+ln.Addr().String())
	}
	tmp := urlFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, urlFile); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

type counter struct {
	obs, failures atomic.Int64
	firstErr      atomic.Value // string
}

func (c *counter) Observe(o telemetry.Observation) {
	c.obs.Add(1)
	if o.Kind == telemetry.KindFailure {
		c.failures.Add(1)
		c.firstErr.CompareAndSwap(nil, o.Err)
	}
}

func runScrapers(urlFile string, interval, warmup, measure time.Duration, profile string) error {
	b, err := os.ReadFile(urlFile)
	if err != nil {
		return err
	}
	targets := strings.Fields(string(b))
	sink := &counter{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, len(targets))
	for _, u := range targets {
		s := scrape.New(scrape.Config{URL: u, Interval: interval}, sink)
		go func() { _ = s.Run(ctx); done <- struct{}{} }()
	}
	time.Sleep(warmup)
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cpu0, obs0, fail0, t0 := cpuTime(), sink.obs.Load(), sink.failures.Load(), time.Now()
	time.Sleep(measure)
	cpu1, obs1, fail1, wall := cpuTime(), sink.obs.Load(), sink.failures.Load(), time.Since(t0)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	cancel()
	for range targets {
		<-done
	}
	scrapes := float64(len(targets)) * wall.Seconds() / interval.Seconds()
	fmt.Printf("targets=%d interval=%s window=%.1fs cpu=%.3fs => %.2f%% of one core; %.0f obs/s; %.3f ms CPU per scrape; failures in window=%d\n",
		len(targets), interval, wall.Seconds(), cpu1.Seconds()-cpu0.Seconds(),
		100*(cpu1-cpu0).Seconds()/wall.Seconds(), float64(obs1-obs0)/wall.Seconds(),
		1000*(cpu1-cpu0).Seconds()/scrapes, fail1-fail0)
	if e, ok := sink.firstErr.Load().(string); ok {
		fmt.Printf("first failure: %s\n", e)
	}
	return nil
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
