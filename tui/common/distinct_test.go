package common

import (
	"fmt"
	"strings"
	"testing"
)

// similarModels are two servers' worth of long, similar model names.
func similarModels(hosts ...string) []string {
	models := []string{
		"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct-FP8",
		"meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct-FP8",
		"Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B-Instruct-AWQ",
	}
	var out []string
	for _, h := range hosts {
		for _, m := range models {
			if h == "" {
				out = append(out, m)
			} else {
				out = append(out, h+"/"+m)
			}
		}
	}
	return out
}

func TestDistinctKeepsNamesApart(t *testing.T) {
	for _, tc := range []struct {
		names []string
		width int
	}{
		{similarModels(""), 18},
		{similarModels(""), 14},
		{append(similarModels("10.0.0.1:8000", "10.0.0.2:8000"), "10.0.0.3:8000/meta-llama/Llama-3.2-3B-Instruct"), 24},
		{append(similarModels("127.0.0.1:18101", "127.0.0.2:18102"), "127.0.0.3:18103/meta-llama/Llama-3.2-3B-Instruct", "127.0.0.4:18104"), 22},
	} {
		t.Run(fmt.Sprint(tc.width), func(t *testing.T) {
			got := Distinct(tc.names, tc.width, "…")
			seen := map[string]string{}
			for _, n := range tc.names {
				s := got[n]
				t.Logf("%-50s %q", n, s)
				if Width(s) > tc.width {
					t.Errorf("%q: %q is %d cells, over %d", n, s, Width(s), tc.width)
				}
				if o, dup := seen[s]; dup {
					t.Errorf("%q and %q both read %q", o, n, s)
				}
				seen[s] = n
			}
		})
	}
}

func TestDistinctKeepsWhatFits(t *testing.T) {
	got := Distinct([]string{"a", "meta-llama/Llama-3.1-8B-Instruct"}, 40, "…")
	if got["meta-llama/Llama-3.1-8B-Instruct"] != "meta-llama/Llama-3.1-8B-Instruct" || got["a"] != "a" {
		t.Fatalf("names that fit changed: %q", got)
	}
}

func TestDistinctKeepsTheDistinguishingWords(t *testing.T) {
	got := Distinct(similarModels(""), 16, "…")
	for n, s := range got {
		for _, w := range []string{"70B", "8B", "FP8", "AWQ", "14B"} {
			if strings.Contains(n, w) && !strings.Contains(s, w) {
				t.Errorf("%q lost %q: %q", n, w, s)
			}
		}
	}
}

func TestReadsAs(t *testing.T) {
	for _, c := range []struct {
		shown, name string
		want        bool
	}{
		{"meta…3.1-70B…FP8", "meta-llama/Llama-3.1-70B-Instruct-FP8", true},
		{"meta…3.1-70B…FP8", "meta-llama/Llama-3.1-8B-Instruct-FP8", false},
		{"qwen", "qwen", true},
		{"qwen", "qwen2", false},
		{"…B", "70B", true},
	} {
		if got := ReadsAs(c.shown, c.name, "…"); got != c.want {
			t.Errorf("ReadsAs(%q, %q) = %v, want %v", c.shown, c.name, got, c.want)
		}
	}
}

// A name's group part (PromQL group_by values) goes last: the same model
// in two clusters stays told apart by its group, which the short form
// starts with, not by what is left of the model's words.
func TestNamerKeepsTheGroupPart(t *testing.T) {
	names := []string{
		"prod/a/meta-llama/Llama-3.1-8B-Instruct", "prod/b/meta-llama/Llama-3.1-8B-Instruct",
		"prod/a/Qwen/Qwen2.5-14B-Instruct", "prod/b/meta-llama/Llama-3.1-70B-Instruct",
	}
	for _, width := range []int{12, 16, 19, 24} {
		n := NewNamer(names, "…")
		for _, name := range names {
			n.Keep(name, len("prod/a/"))
		}
		got := n.Fit(names, names, width)
		seen := map[string]string{}
		for _, name := range names {
			s := got[name]
			t.Logf("%d %-42s %q", width, name, s)
			if Width(s) > width {
				t.Errorf("%q is %d cells, over %d", s, Width(s), width)
			}
			if !strings.HasPrefix(s, name[:len("prod/a")]) {
				t.Errorf("%d: %q lost its group %q", width, s, name[:len("prod/a")])
			}
			if o, dup := seen[s]; dup {
				t.Errorf("%q and %q both read %q", o, name, s)
			}
			seen[s] = name
			if !ReadsAs(s, name, "…") {
				t.Errorf("%q does not read as %q", s, name)
			}
		}
	}
}

// A model's size ends its name and tells it apart: it outlives the plain
// words however narrow ("deepseek…DeepSeek-R1-Distill…" lost "8B" at
// the width the table has at 120 columns).
func TestDistinctKeepsTheSize(t *testing.T) {
	names := []string{"Qwen/Qwen2.5-14B-Instruct", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
		"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"}
	for w := 14; w < len(names[1]); w++ {
		got := Distinct(names, w, "…")
		if short := got[names[1]]; !strings.HasSuffix(short, "8B") {
			t.Errorf("width %d: %q lost its size", w, short)
		}
		for _, n := range names {
			for _, other := range names {
				if other != n && ReadsAs(got[n], other, "…") {
					t.Errorf("width %d: %q reads as %q too", w, got[n], other)
				}
			}
		}
	}
}

// Greedy drops that get stuck (the port-like "99" first, then "ratio"
// cannot go as "ttft…" reads as ttft-p95 too) retry keeping a word.
func TestDistinctRetriesAStuckShortening(t *testing.T) {
	names := []string{"ttft-ratio-99", "tpot-ratio-99", "ttft-p95"}
	if got := Distinct(names, 7, "…")["ttft-ratio-99"]; got != "ttft…99" {
		t.Errorf("got %q, want ttft…99", got)
	}
}
