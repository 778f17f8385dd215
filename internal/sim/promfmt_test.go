package sim

import (
	"strings"
	"testing"
)

func TestWriteCountIsPyFloat(t *testing.T) {
	for _, n := range []uint64{0, 1, 9, 10, 99999, 123456, 999999, 1e6, 1e6 + 1, 8128902, 1e12, 1<<63 + 5} {
		var b strings.Builder
		writeCount(&b, n)
		if want := pyFloat(float64(n)); b.String() != want {
			t.Errorf("writeCount(%d) = %q, want pyFloat's %q", n, b.String(), want)
		}
	}
}

// referenceHistogram is writeHistogram as it was before it wrote its
// bucket lines piecewise: the exposition must not change.
func referenceHistogram(b *strings.Builder, name string, h *histogram, pre, post string, sumFirst bool) {
	base := strings.TrimSuffix(strings.TrimPrefix(pre+post[1:], ","), ",")
	if sumFirst {
		sample(b, name+"_sum", base, pyFloat(h.sum))
	}
	var cum uint64
	for i, c := range h.counts {
		cum += c
		le := "+Inf"
		if i < len(h.bounds) {
			le = pyFloat(h.bounds[i])
		}
		sample(b, name+"_bucket", pre+`le="`+le+`"`+post, pyFloat(float64(cum)))
	}
	sample(b, name+"_count", base, pyFloat(float64(h.count)))
	if !sumFirst {
		sample(b, name+"_sum", base, pyFloat(h.sum))
	}
}

func TestWriteHistogramUnchanged(t *testing.T) {
	for _, bounds := range [][]float64{vllmTTFTBuckets, vllmIterationBuckets, sglangTPOTBuckets, build125Buckets(4096)} {
		h := newHistogram(bounds)
		for i, v := range []float64{0, 0.003, 0.07, 1, 3, 900, 5000, 1e9} {
			for range i*i + 1 {
				h.observe(v)
			}
		}
		h.counts[len(h.counts)-1] += 2e6 // a cumulative count past 10^6
		for _, sumFirst := range []bool{false, true} {
			var got, want strings.Builder
			writeHistogram(&got, "vllm:x", h, `engine="0",`, `,model_name="m"`, sumFirst)
			referenceHistogram(&want, "vllm:x", h, `engine="0",`, `,model_name="m"`, sumFirst)
			if got.String() != want.String() {
				t.Fatalf("bounds %v sumFirst %v:\n%s\nwant\n%s", bounds, sumFirst, got.String(), want.String())
			}
		}
	}
}
