package engines

// Names returns every family name any engine's table reads, plus the
// "_created" companions of counters and histograms, so a parser can skip
// everything else cheaply.
func Names() []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, s := range All() {
		for _, n := range s.Names() {
			add(n)
		}
		for _, aliases := range s.Signals {
			for _, a := range aliases {
				switch a.Type {
				case Histogram, HistogramSum:
					add(CreatedName(a.Name, false))
				case Counter, CounterRatio, CounterShare:
					add(CreatedName(a.Name, true))
					if a.Per != "" {
						add(CreatedName(a.Per, true))
					}
				}
			}
		}
		for _, e := range s.Errors {
			for _, n := range e.Names() {
				add(CreatedName(n, true))
			}
		}
	}
	return out
}
