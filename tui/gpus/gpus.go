// Package gpus is the per-GPU panel (nvitop's device list): one line per
// GPU with its index, name, memory used/total, DRAM activity,
// utilisation, power against its limit and temperature, where the source
// has them, and a total line. It reads telemetry.Snapshot.GPUs only.
package gpus

import (
	"math"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// Model is the panel.
type Model struct {
	ctx           *common.Context
	devs          []telemetry.GPUDevice
	width, height int
	// offset is the first device drawn when they do not all fit; focused:
	// the keys scroll the panel (its title carries the selection mark).
	offset  int
	focused bool
	// layoutKey says what the cached layout was made for: shortening
	// names costs more than drawing the panel.
	layoutKey common.Hash
	cached    *columns
}

// New returns an empty panel.
func New(ctx *common.Context) Model { return Model{ctx: ctx} }

// SetDevices replaces the devices (already in display order).
func (m *Model) SetDevices(d []telemetry.GPUDevice) { m.devs = d; m.clamp() }

// Len is the number of devices.
func (m *Model) Len() int { return len(m.devs) }

// Want is the number of lines the panel needs for every device: a title,
// one line each, and a total when there are several.
func (m *Model) Want() int {
	switch n := len(m.devs); n {
	case 0:
		return 0
	case 1:
		return 2
	default:
		return n + 2
	}
}

// SetSize sets the panel box; View draws exactly h lines.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.clamp()
}

// Focus says whether the keys go to the panel.
func (m *Model) Focus(on bool) { m.focused = on }

// rows is how many device lines fit: the title takes one, the total one
// when there are several devices and room for it.
func (m *Model) rows() int {
	room := m.height - 1
	if m.hasTotal() {
		room--
	}
	return max(min(room, len(m.devs)), 0)
}

// hasTotal: several devices and room for the total under one of them.
func (m *Model) hasTotal() bool { return len(m.devs) > 1 && m.height >= 3 }

// Cut reports whether some devices are not drawn: the panel then scrolls.
func (m *Model) Cut() bool { return m.rows() < len(m.devs) }

func (m *Model) clamp() {
	m.offset = min(max(m.offset, 0), max(len(m.devs)-m.rows(), 0))
}

// Scroll moves the drawn devices by delta lines.
func (m *Model) Scroll(delta int) { m.offset += delta; m.clamp() }

// Page moves by the lines drawn (negative = up).
func (m *Model) Page(dir int) { m.Scroll(dir * max(m.rows(), 1)) }

// Home shows the first devices.
func (m *Model) Home() { m.offset = 0 }

// End shows the last devices.
func (m *Model) End() { m.offset = len(m.devs); m.clamp() }

// columns decides which columns fit and what each shows: the fixed ones
// always, the name as wide as its longest name, the endpoint (the only
// way to tell which GPU serves which model) before the bars and the host;
// names and endpoints that do not fit are shortened, never dropped.
type columns struct {
	name, host, endpoint, bar int
	// names and endpoints are the text drawn for each device's name and
	// endpoint list, keyed by the full text.
	names, endpoints map[string]string
}

const (
	idxW   = 3  // "2/1", " 10"
	memW   = 14 // "127.5/159.6GiB"
	pctW   = 5  // "~100%"
	powerW = 10 // "1024/1400W"
	tempW  = 5  // "61°C", "100°C"
	// fixedW is the always-shown columns with the spaces between the
	// seven cells (index, name, memory, DRAM, util, power, temperature).
	fixedW = idxW + memW + 2*pctW + powerW + tempW + 6
	barW   = 10
	// minEndpointW is what the endpoint column keeps before the name
	// gives up cells: enough for a model's distinctive words.
	minEndpointW = 16
	minNameW     = 8
	maxHostW     = 16
)

// layout shares what the fixed columns leave: the name its longest name
// and the endpoint what it needs first, then the bars and the host when
// GPUs span several; the endpoint takes the rest. Where the endpoint does
// not fit whole, the host:port every endpoint shares goes first (the
// table's group line shows it), then shared words, as the table's names.
func (m *Model) layout(multiHost bool) columns {
	c := columns{names: map[string]string{}, endpoints: map[string]string{}}
	var names, full, hosts []string
	for _, d := range m.devs {
		names = append(names, common.Safe(d.Name))
		full = append(full, endpointText(d))
		hosts = append(hosts, common.Safe(d.Host))
	}
	short := trimSharedHost(full)
	nameW := max(longest(names), len("NAME"))
	if m.hasTotal() {
		nameW = max(nameW, common.Width(m.totalLabel(m.rows()))-idxW-1)
	}
	fullW, shortW := longest(full), longest(short)
	hostW := min(max(longest(hosts), len("HOST")), maxHostW)
	epMin := min(shortW, minEndpointW)

	room := m.inner() - fixedW
	c.name = nameW
	if room-2*(barW+1) >= nameW+1+shortW {
		c.bar = barW
		room -= 2 * (c.bar + 1)
	}
	if multiHost && room-hostW-1 >= nameW+1+epMin {
		c.host = hostW
		room -= c.host + 1
	}
	if room < c.name+1+epMin {
		c.name = max(room-1-epMin, minNameW)
	}
	c.endpoint = room - c.name - 1
	if c.endpoint < len("ENDPOINT") {
		c.endpoint = 0
		c.name = max(room, minNameW)
	}
	for name, shown := range common.Distinct(names, c.name, m.ctx.Glyphs.Ellipsis) {
		c.names[name] = shown
	}
	if c.endpoint > 0 {
		shown := full
		if fullW > c.endpoint {
			shown = short
		}
		fit := common.Distinct(shown, c.endpoint, m.ctx.Glyphs.Ellipsis)
		for i, f := range full {
			c.endpoints[f] = fit[shown[i]]
		}
	}
	return c
}

// layoutIn is what the columns are laid out from: the panel's size and
// place, and the texts of each device (not its figures, which change
// every refresh and never the columns).
type layoutIn struct {
	Width, Rows, Offset     int
	Total, MultiHost, ASCII bool
	Devices                 []deviceNames
}

type deviceNames struct {
	Name, Host string
	Endpoints  []string
}

// cachedLayout is layout, made again only when what it depends on changed.
func (m *Model) cachedLayout(multiHost bool) columns {
	in := layoutIn{Width: m.width, Rows: m.rows(), Offset: m.offset, Total: m.hasTotal(), MultiHost: multiHost, ASCII: m.ctx.Glyphs.ASCII}
	for _, d := range m.devs {
		in.Devices = append(in.Devices, deviceNames{d.Name, d.Host, d.Endpoints})
	}
	k := common.NewHash()
	k.Value(in)
	if m.cached == nil || k != m.layoutKey {
		c := m.layout(multiHost)
		m.cached, m.layoutKey = &c, k
	}
	return *m.cached
}

// endpointText is the endpoints a device is joined to, sanitised.
func endpointText(d telemetry.GPUDevice) string {
	if len(d.Endpoints) == 0 {
		return notJoined
	}
	return common.Safe(strings.Join(d.Endpoints, ", "))
}

const notJoined = "(not joined)"

// trimSharedHost drops from each text the "host:port/" (after any
// scheme) every endpoint of every text begins with; texts stay as they
// are when they do not all share one.
func trimSharedHost(texts []string) []string {
	prefix := ""
	for _, t := range texts {
		if t == notJoined {
			continue
		}
		for _, ep := range strings.Split(t, ", ") {
			p := common.HostPrefix(ep)
			if p == "" || prefix != "" && p != prefix {
				return texts
			}
			prefix = p
		}
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = strings.ReplaceAll(strings.TrimPrefix(t, prefix), ", "+prefix, ", ")
	}
	return out
}

func longest(texts []string) int {
	w := 0
	for _, t := range texts {
		w = max(w, common.Width(t))
	}
	return w
}

// inner is the width after the first cell, which holds the focus mark
// as the table's and the alerts' do.
func (m *Model) inner() int { return max(m.width-1, 0) }

// View renders exactly the panel's height.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 || len(m.devs) == 0 {
		return ""
	}
	r := &m.ctx.Styles.Normal
	g := m.ctx.Glyphs
	multiHost := false
	for _, d := range m.devs {
		multiHost = multiHost || d.Host != m.devs[0].Host
	}
	c := m.cachedLayout(multiHost)
	head := []string{common.FitRight("GPU", idxW, g.Ellipsis), common.Fit("NAME", c.name, g.Ellipsis)}
	if c.host > 0 {
		head = append(head, common.Fit("HOST", c.host, g.Ellipsis))
	}
	head = append(head, common.FitRight("MEM used/total", memW, g.Ellipsis))
	if c.bar > 0 {
		head = append(head, common.Fit("", c.bar, ""))
	}
	head = append(head, common.FitRight("DRAM", pctW, ""))
	if c.bar > 0 {
		head = append(head, common.Fit("", c.bar, ""))
	}
	head = append(head, common.FitRight("UTIL", pctW, ""), common.FitRight("POWER", powerW, ""), common.FitRight("TEMP", tempW, ""))
	if c.endpoint > 0 {
		head = append(head, common.Fit("ENDPOINT", c.endpoint, ""))
	}
	mark := " "
	if m.focused {
		mark = g.Sel
	}
	lines := []string{m.ctx.Styles.Title.S(mark + common.Fit(strings.Join(head, " "), m.inner(), g.Ellipsis))}
	rows := m.rows()
	for _, d := range m.devs[m.offset : m.offset+rows] {
		lines = append(lines, " "+m.device(r, c, d))
	}
	if m.hasTotal() {
		lines = append(lines, " "+m.total(r, c, rows))
	}
	for len(lines) < m.height {
		lines = append(lines, "")
	}
	return strings.Join(lines[:m.height], "\n")
}

// device is one GPU's line; a stale device is drawn in the stale paint
// with its index marked, so old figures never pass for live ones.
func (m *Model) device(r *themes.Roles, c columns, d telemetry.GPUDevice) string {
	g := m.ctx.Glyphs
	paint := r.Text
	idx := d.Index
	if d.MIG != "" {
		idx += "/" + d.MIG
	}
	if d.State == telemetry.Stale {
		paint = r.Stale
		idx = "?" + idx
	}
	cells := []string{paint.S(common.FitRight(idx, idxW, g.Ellipsis)),
		paint.S(common.Fit(c.names[common.Safe(d.Name)], c.name, g.Ellipsis))}
	if c.host > 0 {
		cells = append(cells, r.Faint.S(common.FitMiddle(common.Safe(d.Host), c.host, g.Ellipsis)))
	}
	memRatio := ratio(d.MemUsedBytes, d.MemTotalBytes)
	cells = append(cells, paint.S(common.FitRight(memText(d.MemUsedBytes, d.MemTotalBytes, g.Unknown), memW, g.Ellipsis)))
	if c.bar > 0 {
		cells = append(cells, m.bar(r, memRatio, c.bar))
	}
	dram, approx := val(d.DRAMActiveRatio), false
	if math.IsNaN(dram) {
		dram, approx = val(d.MemBusyRatio), true
	}
	cells = append(cells, paint.S(common.FitRight(pct(dram, approx, g.Unknown), pctW, "")))
	if c.bar > 0 {
		cells = append(cells, m.bar(r, dram, c.bar))
	}
	cells = append(cells, paint.S(common.FitRight(pct(val(d.UtilRatio), false, g.Unknown), pctW, "")),
		m.power(r, paint, val(d.PowerW), val(d.PowerLimitW)),
		m.temp(r, paint, val(d.TemperatureCelsius)))
	if c.endpoint > 0 {
		cells = append(cells, r.Faint.S(common.Fit(c.endpoints[endpointText(d)], c.endpoint, g.Ellipsis)))
	}
	return common.Cut(strings.Join(cells, " "), m.inner())
}

// totalLabel is the total line's first cell: how many GPUs, and how many
// are off the panel above and below (tab, then ↑/↓ scroll).
func (m *Model) totalLabel(shown int) string {
	g := m.ctx.Glyphs
	sum := "Σ "
	if g.ASCII {
		sum = "total "
	}
	label := sum + strconv.Itoa(len(m.devs)) + " GPUs"
	if shown < len(m.devs) {
		var more []string
		if m.offset > 0 {
			more = append(more, g.Up+strconv.Itoa(m.offset))
		}
		if below := len(m.devs) - m.offset - shown; below > 0 {
			more = append(more, g.Down+strconv.Itoa(below))
		}
		label += " (" + strings.Join(more, " ") + " more)"
	}
	return label
}

// total sums memory and power, averages DRAM and utilisation and shows
// the hottest GPU, over the devices that report each figure.
func (m *Model) total(r *themes.Roles, c columns, shown int) string {
	g := m.ctx.Glyphs
	var used, size, power, limit, dram, util, hottest float64
	var nUsed, nSize, nPower, nLimit, nDram, nUtil int
	hottest = math.NaN()
	for _, d := range m.devs {
		add := func(p *float64, sum *float64, n *int) {
			if p != nil {
				*sum += *p
				*n++
			}
		}
		add(d.MemUsedBytes, &used, &nUsed)
		add(d.MemTotalBytes, &size, &nSize)
		add(d.PowerW, &power, &nPower)
		add(d.PowerLimitW, &limit, &nLimit)
		add(d.DRAMActiveRatio, &dram, &nDram)
		add(d.UtilRatio, &util, &nUtil)
		if t := val(d.TemperatureCelsius); !math.IsNaN(t) && (math.IsNaN(hottest) || t > hottest) {
			hottest = t
		}
	}
	label := m.totalLabel(shown)
	cells := []string{r.Accent.S(common.Fit(label, idxW+1+c.name, g.Ellipsis))}
	if c.host > 0 {
		cells = append(cells, common.Fit("", c.host, ""))
	}
	usedP, sizeP := known(used, nUsed), known(size, nSize)
	cells = append(cells, r.Accent.S(common.FitRight(memText(usedP, sizeP, g.Unknown), memW, g.Ellipsis)))
	if c.bar > 0 {
		cells = append(cells, m.bar(r, ratio(usedP, sizeP), c.bar))
	}
	meanDram := mean(dram, nDram)
	cells = append(cells, r.Accent.S(common.FitRight(pct(meanDram, false, g.Unknown), pctW, "")))
	if c.bar > 0 {
		cells = append(cells, m.bar(r, meanDram, c.bar))
	}
	lim := math.NaN()
	if nLimit == nPower && nPower > 0 {
		lim = limit // a limit only when every drawing GPU has one
	}
	cells = append(cells, r.Accent.S(common.FitRight(pct(mean(util, nUtil), false, g.Unknown), pctW, "")),
		m.power(r, r.Accent, val(known(power, nPower)), lim), m.temp(r, r.Accent, hottest))
	return common.Cut(strings.Join(cells, " "), m.inner())
}

func (m *Model) power(r *themes.Roles, paint themes.Paint, w, limit float64) string {
	text := m.ctx.Glyphs.Unknown
	switch {
	case !math.IsNaN(w) && !math.IsNaN(limit):
		text = strconv.Itoa(int(math.Round(w))) + "/" + strconv.Itoa(int(math.Round(limit))) + "W"
		if w >= 0.95*limit {
			paint = r.Warn // at the cap: the GPU is power-throttling
		}
	case !math.IsNaN(w):
		text = strconv.Itoa(int(math.Round(w))) + "W"
	}
	return paint.S(common.FitRight(text, powerW, m.ctx.Glyphs.Ellipsis))
}

func (m *Model) temp(r *themes.Roles, paint themes.Paint, c float64) string {
	text := m.ctx.Glyphs.Unknown
	if !math.IsNaN(c) {
		deg := "°C"
		if m.ctx.Glyphs.ASCII {
			deg = "C"
		}
		text = strconv.Itoa(int(math.Round(c))) + deg
		if c >= 85 {
			paint = r.Warn // datacentre GPUs slow down near 85–90 °C
		}
	}
	return paint.S(common.FitRight(text, tempW, ""))
}

// bar draws ratio v (0–1) in w cells; unknown is blank, never empty-as-zero.
func (m *Model) bar(r *themes.Roles, v float64, w int) string {
	if math.IsNaN(v) {
		return common.Fit("", w, "")
	}
	full := int(math.Round(min(max(v, 0), 1) * float64(w)))
	g := m.ctx.Glyphs
	return r.Line.S(strings.Repeat(g.Bar, full)) + r.Faint.S(strings.Repeat(g.HLine, w-full))
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func known(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	return &sum
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func ratio(used, total *float64) float64 {
	if used == nil || total == nil || *total <= 0 {
		return math.NaN()
	}
	return *used / *total
}

// pct formats a ratio; approx (memory busy time standing in for DRAM
// activity) is marked "~", as an estimated MBU is in the table.
func pct(v float64, approx bool, unknown string) string {
	if math.IsNaN(v) {
		return unknown
	}
	s := figures.Percent(v * 100)
	if approx {
		s = "~" + s
	}
	return s
}

// memText is "used/total" in GiB (or MiB below 1 GiB), with one unit.
func memText(used, total *float64, unknown string) string {
	const gib = 1 << 30
	switch {
	case used == nil && total == nil:
		return unknown
	case total == nil:
		return figures.MiB(*used/(1<<20)) + "/" + unknown
	case used == nil:
		return unknown + "/" + figures.MiB(*total/(1<<20))
	}
	return oneDecimal(*used/gib) + "/" + oneDecimal(*total/gib) + "GiB"
}

func oneDecimal(v float64) string {
	if v >= 100 {
		return strconv.Itoa(int(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Terms explains every figure of the panel, for the help screen.
func Terms() [][2]string {
	return [][2]string{
		{"GPU", "the device index on its host (index/N: MIG instance N); ?N: no fresh reading for 3 refreshes, figures dimmed"},
		{"MEM used/total", "framebuffer memory in use / its size (DCGM FB_USED, FB_USED+FREE+RESERVED or FB_TOTAL; nvidia-smi memory.used/total); engines preallocate most of it"},
		{"DRAM", "DCGM_FI_PROF_DRAM_ACTIVE: share of cycles the memory interface moved data, the measured bandwidth use; ~N% is memory busy time (MEM_COPY_UTIL, utilization.memory), not bandwidth"},
		{"UTIL", "share of time any kernel ran (DCGM GPU_UTIL, utilization.gpu): near 100% whenever anything runs, so not a measure of how much of the GPU works"},
		{"POWER", "draw now / power limit, W (DCGM POWER_USAGE and POWER_MGMT_LIMIT, nvidia-smi power.draw/power.limit); at 95% of the limit it is highlighted: the GPU throttles"},
		{"TEMP", "GPU die temperature, °C; highlighted from 85 °C, where datacentre GPUs slow down"},
		{"ENDPOINT", "the endpoints the GPU is joined to (same host in quick mode, or the GPU map); where narrow without the host:port they all share, then shortened keeping the words that tell them apart; (not joined): no endpoint claims it"},
		{"Σ N GPUs", "total: memory and power summed, DRAM and UTIL averaged, TEMP the hottest, each over the GPUs that report it (drawn or not); (▲N ▼M more): GPUs above and below the panel, tab then ↑/↓ scrolls it"},
	}
}
