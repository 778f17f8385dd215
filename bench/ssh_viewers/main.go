//go:build unix

// Command ssh_viewers measures what SSH viewers cost the process serving
// them: one sshserve.Server over one monitor (N endpoints fed every
// second by a scripted source, SLOs evaluated every second), watched by 1
// and then by 10 viewers. The viewers are SSH clients in a child process
// (this binary with -clients), so their decryption and reading are not
// counted; the CPU figure is getrusage(RUSAGE_SELF) of the serving process
// over the measurement window: feed + monitor + SSH server + one Bubble Tea
// program per viewer + encryption. Driven by bench/ssh_viewers.sh.
package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sshserve"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui"
)

type params struct {
	feed            string
	endpoints       int
	viewers         []int
	warmup, measure time.Duration
	runs            int
	cols, rows      int
	cpuprofile      string
}

func main() {
	clients := flag.Int("clients", 0, "child mode: hold this many viewers on -addr until stdin closes")
	addr := flag.String("addr", "", "child mode: server address")
	keyFile := flag.String("key", "", "child mode: private key file")
	simulate := flag.Int("simulate", 0, "child mode: serve this many simulated models until stdin closes")
	var p params
	viewers := flag.String("viewers", "1,10", "viewer counts to compare, the first is the base")
	flag.IntVar(&p.endpoints, "endpoints", 20, "endpoints in the monitor, each updated every second")
	flag.StringVar(&p.feed, "feed", "script", "what updates them: script (observations written in-process: a near-free monitor) or sim (real probes and scrapes of a simulator in a child process)")
	flag.DurationVar(&p.warmup, "warmup", 5*time.Second, "time after the viewers connect before measuring")
	flag.DurationVar(&p.measure, "measure", 20*time.Second, "measurement window")
	flag.IntVar(&p.runs, "runs", 3, "runs; the ratio reported is their median")
	flag.IntVar(&p.cols, "cols", 160, "viewer terminal width")
	flag.IntVar(&p.rows, "rows", 50, "viewer terminal height")
	flag.StringVar(&p.cpuprofile, "cpuprofile", "", "write a CPU profile of the last window")
	flag.Parse()
	var err error
	switch {
	case *simulate > 0:
		err = runSimulator(*simulate)
	case *clients > 0:
		err = runClients(*clients, *addr, *keyFile, p.cols, p.rows)
	default:
		for _, f := range strings.Split(*viewers, ",") {
			n, perr := strconv.Atoi(strings.TrimSpace(f))
			if perr != nil || n < 1 {
				err = fmt.Errorf("-viewers %q: want positive counts", *viewers)
				break
			}
			p.viewers = append(p.viewers, n)
		}
		if err == nil {
			err = runServer(p)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ssh_viewers:", err)
		os.Exit(1)
	}
}

func runServer(p params) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "ssh_viewers")
	if err != nil {
		return err
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintln(os.Stderr, "ssh_viewers:", err)
		}
	}()
	keyFile, ak, err := writeKeys(dir)
	if err != nil {
		return err
	}
	m := monitor.New(monitor.Options{Objectives: slo.DefaultObjectives()})
	switch p.feed {
	case "script":
		go feed(ctx, m, p.endpoints)
	case "sim":
		url, stopSim, err := startSimulator(p.endpoints)
		if err != nil {
			return err
		}
		defer func() {
			if err := stopSim(); err != nil {
				fmt.Fprintln(os.Stderr, "ssh_viewers: simulator:", err)
			}
		}()
		if err := addSimSources(m, url, p.endpoints); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-feed %q: want script or sim", p.feed)
	}
	monDone := make(chan error, 1)
	go func() { monDone <- m.Run(ctx) }()
	// The options `ttftop serve --ssh` uses by default.
	srv, err := sshserve.New(m.Store, m.SLO, sshserve.Options{Listen: "127.0.0.1:0", AuthorizedKeys: ak,
		HostKey: filepath.Join(dir, "host_key"), IdleTimeout: -1, MaxDuration: -1, MaxSessions: slices.Max(p.viewers),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		View:   tui.Options{Theme: themes.DefaultName, FPS: tui.DefaultFPS, Refresh: tui.DefaultRefresh, Window: tui.DefaultWindow}})
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	if p.feed == "sim" {
		time.Sleep(p.warmup) // let discovery and the first probes settle
	}
	fmt.Printf("feed=%s endpoints=%d viewers=%v warmup=%v measure=%v runs=%d pty=%dx%d (nproc=%s, load %s)\n",
		p.feed, p.endpoints, p.viewers, p.warmup, p.measure, p.runs, p.cols, p.rows, nproc(), loadavg())
	var ratios []float64
	for r := 1; r <= p.runs; r++ {
		var cpus []float64
		line := fmt.Sprintf("run %d:", r)
		for i, n := range p.viewers {
			prof := ""
			if r == p.runs && i == len(p.viewers)-1 {
				prof = p.cpuprofile
			}
			res, err := measure(srv, n, keyFile, p, prof)
			if err != nil {
				return err
			}
			cpus = append(cpus, res.cpu)
			line += fmt.Sprintf("  %2d viewers: %5.2f%% of one core, %5.0f B/s per viewer;", n, res.cpu, res.bytesPerViewer)
		}
		ratio := cpus[len(cpus)-1] / cpus[0]
		ratios = append(ratios, ratio)
		fmt.Printf("%s  ratio %.2f\n", line, ratio)
	}
	slices.Sort(ratios)
	fmt.Printf("median ratio %d/%d viewers: %.2f\n", p.viewers[len(p.viewers)-1], p.viewers[0], ratios[len(ratios)/2])
	cancel()
	if err := <-served; err != nil {
		return err
	}
	return <-monDone
}

type result struct {
	cpu            float64 // % of one core
	bytesPerViewer float64 // B/s, over the whole time connected
}

// measure connects n viewers from a child process, waits for the server
// to count them, warms up, and reads this process's CPU over the window.
func measure(srv *sshserve.Server, n int, keyFile string, p params, cpuprofile string) (result, error) {
	cmd := exec.Command(os.Args[0], "-clients", strconv.Itoa(n), "-addr", srv.Addr().String(), "-key", keyFile,
		"-cols", strconv.Itoa(p.cols), "-rows", strconv.Itoa(p.rows))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	stop := func() error {
		if err := stdin.Close(); err != nil {
			return err
		}
		return cmd.Wait()
	}
	if err := waitViewers(srv, n); err != nil {
		return result{}, errorsJoin(err, stop())
	}
	time.Sleep(p.warmup)
	var prof *os.File
	if cpuprofile != "" {
		if prof, err = os.Create(cpuprofile); err != nil {
			return result{}, errorsJoin(err, stop())
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			return result{}, errorsJoin(errorsJoin(err, prof.Close()), stop())
		}
	}
	c0, t0 := cpuTime(), time.Now()
	time.Sleep(p.measure)
	c1, t1 := cpuTime(), time.Now()
	if prof != nil {
		pprof.StopCPUProfile()
		if err := prof.Close(); err != nil {
			return result{}, errorsJoin(err, stop())
		}
	}
	if err := stop(); err != nil {
		return result{}, err
	}
	if err := waitViewers(srv, 0); err != nil {
		return result{}, err
	}
	res := result{cpu: 100 * float64(c1-c0) / float64(t1.Sub(t0))}
	// The child prints "bytes=B seconds=S" (all viewers together).
	var bytes, secs float64
	if _, err := fmt.Sscanf(strings.TrimSpace(out.String()), "bytes=%g seconds=%g", &bytes, &secs); err != nil {
		return result{}, fmt.Errorf("client output %q: %w", out.String(), err)
	}
	res.bytesPerViewer = bytes / secs / float64(n)
	return res, nil
}

func errorsJoin(a, b error) error {
	if b == nil {
		return a
	}
	return fmt.Errorf("%w (stopping clients: %v)", a, b)
}

func waitViewers(srv *sshserve.Server, n int) error {
	deadline := time.Now().Add(60 * time.Second)
	for srv.Viewers() != n {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d viewers connected, want %d", srv.Viewers(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// cpuTime is user+system CPU of this process (all threads, not children).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // cannot fail for RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeKeys writes a client key (for the child) and an authorized_keys
// file holding its public half.
func writeKeys(dir string) (keyFile, ak string, err error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	block, err := gossh.MarshalPrivateKey(priv, "ssh_viewers")
	if err != nil {
		return "", "", err
	}
	keyFile, ak = filepath.Join(dir, "id"), filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", "", err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return "", "", err
	}
	return keyFile, ak, os.WriteFile(ak, gossh.MarshalAuthorizedKey(signer.PublicKey()), 0o600)
}

func nproc() string {
	b, err := exec.Command("nproc").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// waitStdin reads stdin until EOF: the parent closes it to end a phase.
func waitStdin() error {
	_, err := io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	return err
}
