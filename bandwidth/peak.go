package bandwidth

import "strings"

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
