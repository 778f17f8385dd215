package telemetry

import "sort"

// LabelAdapterOf is the label of a LoRA adapter's endpoint naming its base
// model (a probe sets it from the adapter's parent in /v1/models).
const LabelAdapterOf = "adapter_of"

// AdapterBases maps each LoRA adapter's endpoint name to its base model's
// endpoint: a top-level endpoint (no replica, no adapter) serving the base
// model, on the adapter's server when one is (quick mode probes each model
// of a server), else the one that is no P/D pool (the router's), else the
// first by name. An adapter whose base is not among eps maps to none.
func AdapterBases(eps []Endpoint) map[string]string {
	byModel := map[string][]Endpoint{}
	for _, e := range eps {
		if e.Group == "" && e.Labels[LabelAdapterOf] == "" && e.Model != "" {
			byModel[e.Model] = append(byModel[e.Model], e)
		}
	}
	bases := map[string]string{}
	for _, e := range eps {
		if base := e.Labels[LabelAdapterOf]; base != "" && e.Group == "" {
			if b, ok := pickBase(byModel[base], e.BaseURL); ok {
				bases[e.Name] = b
			}
		}
	}
	return bases
}

// pickBase chooses among the endpoints serving a base model (see
// AdapterBases).
func pickBase(cands []Endpoint, server string) (string, bool) {
	if len(cands) == 0 {
		return "", false
	}
	rank := func(e Endpoint) int {
		switch {
		case server != "" && e.BaseURL == server:
			return 0
		case e.Labels[LabelRole] == "":
			return 1
		}
		return 2
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if rc, rb := rank(c), rank(best); rc < rb || rc == rb && c.Name < best.Name {
			best = c
		}
	}
	return best.Name, true
}

// AdaptersOf lists the model names of base's adapters in snap, sorted.
func AdaptersOf(snap Snapshot, base string) []string {
	eps := make([]Endpoint, len(snap.Endpoints))
	for i, es := range snap.Endpoints {
		eps[i] = es.Endpoint
	}
	var out []string
	for name, b := range AdapterBases(eps) {
		if b == base {
			for _, e := range eps {
				if e.Name == name {
					out = append(out, e.Model)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
