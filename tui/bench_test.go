package tui

import (
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func bench200(b *testing.B) Model {
	b.Helper()
	opts := testOptions()
	opts.Theme = "dark" // colours on: the realistic cost
	m := New(bigStore(200), fixtureAlerts(), opts)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	refresh(m)
	return m
}

// BenchmarkView200 is a full frame rebuild (what a changed refresh costs)
// of the main screen with 200 endpoints at 160×50.
func BenchmarkView200(b *testing.B) {
	m := bench200(b)
	b.ReportAllocs()
	for b.Loop() {
		m.a.dirty = true
		_ = m.View()
	}
}

// BenchmarkView200Cached is View when nothing changed (most messages).
func BenchmarkView200Cached(b *testing.B) {
	m := bench200(b)
	_ = m.View()
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkRefresh200 is the refresh command (snapshot, series, badges,
// fingerprint), which runs off the update path.
func BenchmarkRefresh200(b *testing.B) {
	m := bench200(b)
	b.ReportAllocs()
	for b.Loop() {
		m.a.inflight = false
		_ = m.a.fetch()()
	}
}

// BenchmarkApply200 is applying a refresh in Update (sort, filter, layout).
func BenchmarkApply200(b *testing.B) {
	m := bench200(b)
	m.a.inflight = false
	msg := m.a.fetch()().(dataMsg)
	b.ReportAllocs()
	for b.Loop() {
		msg.seq = m.a.seq + 1
		m.a.seq = msg.seq
		msg.fp++
		m.a.onData(msg)
	}
}

// BenchmarkDetailView is a full rebuild of the detail screen at 160×50.
func BenchmarkDetailView(b *testing.B) {
	m := benchDetail(b)
	b.ReportAllocs()
	for b.Loop() {
		m.a.detail.Invalidate()
		m.a.dirty = true
		_ = m.View()
	}
}

// benchDetail is bench200 with the detail screen open and drawn once.
func benchDetail(b *testing.B) Model {
	m := bench200(b)
	press(m, "enter")
	refresh(m)
	_ = m.View()
	return m
}

// BenchmarkDetailLive is one live-pane update on the detail screen (up to
// 10 a second while a response streams).
func BenchmarkDetailLive(b *testing.B) {
	m := benchDetail(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		m.Update(liveMsg{id: m.a.liveID, ep: m.a.detail.Name(),
			live: telemetry.LiveText{Text: strings.Repeat("token ", i%200), Tokens: i % 200}})
		_ = m.View()
	}
}

// BenchmarkDetailRefresh is a refresh of the detail screen whose figures
// did not change, only the clock (header): cached sections are reused.
func BenchmarkDetailRefresh(b *testing.B) {
	m := benchDetail(b)
	m.a.inflight = false
	msg := m.a.fetch()().(dataMsg)
	b.ReportAllocs()
	for b.Loop() {
		msg.seq = m.a.seq + 1
		m.a.seq = msg.seq
		msg.now = msg.now.Add(time.Second)
		m.a.onData(msg)
		_ = m.View()
	}
}

// BenchmarkViewCharts3 is a full frame rebuild of the demo's main screen
// shape, 3 endpoints with their TTFT and TPOT charts at 160×50, charts
// redrawn (as when their bins move on, every refresh at a 1m window).
func BenchmarkViewCharts3(b *testing.B) {
	opts := testOptions()
	opts.Theme = "dark"
	m := New(bigStore(3), fixtureAlerts(), opts)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	refresh(m)
	refresh(m) // the series for the chart layout
	if !m.a.table.Charts() {
		b.Fatal("3 endpoints at 160×50: want charts")
	}
	b.ReportAllocs()
	for b.Loop() {
		m.a.table.Invalidate()
		m.a.dirty = true
		_ = m.View()
	}
}
