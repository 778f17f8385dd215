package bandwidth

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// GPU is one entry of the peak-bandwidth table.
type GPU struct {
	// Name is the canonical name ("H100 SXM").
	Name string
	// Memory describes the memory ("80 GB HBM3").
	Memory string
	// Peak is the datasheet peak memory bandwidth in bytes per second.
	Peak float64
}

// Table returns the known GPUs with their datasheet peaks (A10G is AWS's
// A10 variant with the same 600 GB/s).
func Table() []GPU {
	return []GPU{
		{"A10", "24 GB GDDR6", 600e9},
		{"A10G", "24 GB GDDR6", 600e9},
		{"L4", "24 GB GDDR6", 300e9},
		{"L40S", "48 GB GDDR6", 864e9},
		{"A100 40GB", "40 GB HBM2", 1555e9},
		{"A100 80GB PCIe", "80 GB HBM2e", 1935e9},
		{"A100 80GB SXM", "80 GB HBM2e", 2039e9},
		{"H100 SXM", "80 GB HBM3", 3.35e12},
		{"H100 PCIe", "80 GB HBM2e", 2.0e12},
		{"H100 NVL", "94 GB HBM3", 3.9e12},
		{"H200", "141 GB HBM3e", 4.8e12},
		{"B200", "180 GB HBM3e", 8e12},
		{"MI300X", "192 GB HBM3", 5.3e12},
	}
}

// Lookup maps a GPU name as dcgm-exporter (modelName) or nvidia-smi (name)
// reports it to the table: "NVIDIA H100 80GB HBM3" → H100 SXM,
// "NVIDIA A100-SXM4-40GB" → A100 40GB. Ambiguous names (a bare "H100")
// and unknown GPUs are not matched.
func Lookup(name string) (GPU, bool) {
	return LookupWith(name, nil)
}

// LookupWith is Lookup with user overrides: GPU name (case-insensitive,
// as reported) → peak bytes per second, consulted first.
func LookupWith(name string, overrides map[string]float64) (GPU, bool) {
	for k, v := range overrides {
		if strings.EqualFold(strings.TrimSpace(k), strings.TrimSpace(name)) && v > 0 {
			return GPU{Name: name, Peak: v}, true
		}
	}
	canon := canonical(name)
	if canon == "" {
		return GPU{}, false
	}
	for _, g := range Table() {
		if g.Name == canon {
			return g, true
		}
	}
	return GPU{}, false
}

// Resolve is Lookup for a name a person wrote (a config's gpu): the names
// dcgm-exporter and nvidia-smi report, the table's own names and the
// short names that are unambiguous ("H200", "l4", "A10G", "MI300X"), all
// case-insensitive. Its error says why a name has no peak: an ambiguous
// name ("H100") lists the entries it could be, an unknown one the known
// names.
func Resolve(name string) (GPU, error) {
	if strings.TrimSpace(name) == "" {
		return GPU{}, fmt.Errorf("no GPU named")
	}
	if g, ok := Lookup(name); ok {
		return g, nil
	}
	if strings.Contains(strings.ToUpper(name), "GH200") {
		return GPU{}, fmt.Errorf("GPU %q (Grace Hopper) is not in the table: its peak is 4.0 or 4.9 TB/s depending on its memory; set peak_bandwidth", name)
	}
	if c := candidates(name); len(c) > 0 {
		return GPU{}, fmt.Errorf("GPU %q is ambiguous: it could be %s; name one, or set peak_bandwidth", name, orList(c))
	}
	return GPU{}, fmt.Errorf("unknown GPU %q: known are %s (or the names dcgm-exporter and nvidia-smi report for them); "+
		"else set peak_bandwidth", name, strings.Join(Names(), ", "))
}

// Names returns the table's names, in table order.
func Names() []string {
	var names []string
	for _, g := range Table() {
		names = append(names, g.Name)
	}
	return names
}

// candidates are the table entries of the family a name that canonical
// cannot place belongs to ("H100" → the three H100s), narrowed to those of
// a memory size the name gives ("H100 80GB" → SXM and PCIe).
func candidates(name string) []string {
	n := strings.ToUpper(name)
	var family string
	for _, f := range []string{"H100", "A100"} {
		if strings.Contains(n, f) {
			family = f
		}
	}
	if family == "" {
		return nil
	}
	var all, sized []string
	for _, g := range Table() {
		if !strings.HasPrefix(g.Name, family) {
			continue
		}
		all = append(all, g.Name)
		size := strings.Fields(g.Memory)[0] + "GB" // "80 GB HBM3" → 80GB
		if strings.Contains(n, size) {
			sized = append(sized, g.Name)
		}
	}
	if len(sized) > 0 {
		return sized
	}
	return all
}

// orList writes "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// ParsePeak reads a peak bandwidth per GPU: bytes per second as a number
// ("3.35e12") or with a decimal unit ("3.35TB/s", "900 GB/s"). Binary or
// bit units are refused rather than guessed.
func ParsePeak(s string) (float64, error) {
	text := strings.TrimSpace(s)
	// Decimal units, as datasheets quote them (1 TB/s = 10^12 B/s).
	units := []struct {
		unit  string
		bytes float64
	}{{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}, {"B/s", 1}}
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(text, u.unit) {
			text, scale = strings.TrimSpace(strings.TrimSuffix(text, u.unit)), u.bytes
			break
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a bandwidth: write bytes per second (3.35e12) or a number with TB/s, GB/s, MB/s, kB/s or B/s (3.35TB/s)", s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return v * scale, nil
}

// canonical returns the table name for a reported GPU name, or "".
func canonical(name string) string {
	n := strings.ToUpper(name)
	n = strings.NewReplacer("-", " ", "_", " ", "(", " ", ")", " ").Replace(n)
	tokens := strings.Fields(n)
	has := func(s string) bool { return strings.Contains(n, s) }
	tok := func(s string) bool {
		for _, t := range tokens {
			if t == s {
				return true
			}
		}
		return false
	}
	switch {
	case has("MI300X"):
		return "MI300X"
	case has("GH200"):
		return "" // Grace Hopper: 4.0 or 4.9 TB/s depending on memory; not in the table
	case has("B200"):
		return "B200"
	case has("H200"):
		return "H200"
	case has("H100"):
		switch {
		case has("NVL"):
			return "H100 NVL"
		case has("PCIE"):
			return "H100 PCIe"
		case has("HBM3") || has("SXM"):
			return "H100 SXM"
		}
		return ""
	case has("A100"):
		switch {
		case has("40GB"):
			return "A100 40GB"
		case has("80GB") && has("PCIE"):
			return "A100 80GB PCIe"
		case has("80GB"):
			return "A100 80GB SXM"
		}
		return ""
	case tok("L40S"):
		return "L40S"
	case tok("L4"):
		return "L4"
	case tok("A10G"):
		return "A10G"
	case tok("A10"):
		return "A10"
	}
	return ""
}
