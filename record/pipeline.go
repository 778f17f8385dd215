package record

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
)

// Read-ahead batches: big enough that channel handoffs cost little per
// line, small enough that a paced replay holds little in memory.
const (
	batchLines = 512
	batchBytes = 256 << 10
)

const checkpointPrefix = `{"kind":"checkpoint"`

// decoded is one line as a decoding worker left it.
type decoded struct {
	l    line
	no   int64 // line number
	off  int64 // decompressed offset
	err  error // decoding failed: a *DamageError
	skip bool  // not decoded: a blank line, or a preamble the reader skips
}

// batch is a run of lines read together and decoded by one worker.
type batch struct {
	data []byte
	refs []lineRef
	out  []decoded
	err  error // what ended reading after these lines (io.EOF, damage)
	done chan struct{}
}

type lineRef struct {
	start, end int
	no, off    int64
	skip       bool
}

// pipeline reads lines in one goroutine and decodes batches of them in
// parallel workers, handing them back in order: replay is bound by
// decompression plus decoding, and this spreads it over the cores.
type pipeline struct {
	order    chan *batch
	quit     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// startPipeline starts reading src. preamble and cps are the reader's
// rules for preamble lines, so workers skip decoding the ones it would
// drop (it recognises checkpoints by the writer's prefix; a line it fails
// to skip is still dropped by the reader).
func startPipeline(src *lineSource, preamble bool, cps int) *pipeline {
	workers := min(max(runtime.GOMAXPROCS(0), 1), 4)
	p := &pipeline{order: make(chan *batch, 2*workers+2), quit: make(chan struct{})}
	work := make(chan *batch, 2*workers+2)
	p.wg.Add(1 + workers)
	go func() {
		defer p.wg.Done()
		defer close(work)
		defer close(p.order)
		p.produce(src, preamble, cps, work)
	}()
	for range workers {
		go func() {
			defer p.wg.Done()
			var in interner
			for b := range work {
				b.decode(&in)
				close(b.done)
			}
		}()
	}
	return p
}

func (p *pipeline) produce(src *lineSource, preamble bool, cps int, work chan<- *batch) {
	for {
		b := &batch{done: make(chan struct{}), data: make([]byte, 0, batchBytes+4096), refs: make([]lineRef, 0, batchLines)}
		for len(b.refs) < batchLines && len(b.data) < batchBytes {
			line, no, off, err := src.next()
			if err != nil {
				b.err = err
				break
			}
			skip := false
			if bytes.HasPrefix(line, []byte(checkpointPrefix)) {
				cps++
			} else if bytes.HasPrefix(line, []byte(statePrefix)) && (!preamble || cps != 1) {
				skip = true
			}
			start := len(b.data)
			b.data = append(b.data, line...)
			b.refs = append(b.refs, lineRef{start: start, end: len(b.data), no: no, off: off, skip: skip})
		}
		// The consumer takes batches from order and waits for each to be
		// decoded, so order is sent first: workers may finish out of turn.
		select {
		case p.order <- b:
		case <-p.quit:
			return
		}
		select {
		case work <- b:
		case <-p.quit:
			return
		}
		if b.err != nil {
			return
		}
	}
}

func (b *batch) decode(in *interner) {
	b.out = make([]decoded, len(b.refs))
	for i, r := range b.refs {
		d := &b.out[i]
		d.no, d.off, d.skip = r.no, r.off, r.skip
		line := b.data[r.start:r.end]
		if d.skip || len(bytes.TrimSpace(line)) == 0 {
			d.skip = true
			continue
		}
		if err := decodeLine(line, &d.l, in); err != nil {
			d.err = &DamageError{Line: r.no, Offset: r.off, Err: err}
		}
	}
	b.data = nil // decoded lines hold copies, never the batch's bytes
}

var errReaderClosed = errors.New("record: reader closed")

// next returns the next batch's lines and what ended reading after them.
func (p *pipeline) next() ([]decoded, error) {
	b, ok := <-p.order
	if !ok {
		return nil, errReaderClosed
	}
	<-b.done
	return b.out, b.err
}

// stop ends the goroutines; it returns once they have.
func (p *pipeline) stop() {
	p.stopOnce.Do(func() { close(p.quit) })
	p.wg.Wait()
}
