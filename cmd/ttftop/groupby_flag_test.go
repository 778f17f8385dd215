package main

import (
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"
)

// --group-by applies to every PromQL source: from --prometheus, as here.
func TestGroupByFlag(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f sourceFlags
	f.bind(fs)
	if err := fs.Parse([]string{"--prometheus", "http://prom:9090", "--prometheus", "http://thanos:10902", "--group-by", "namespace, cluster,"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Prometheus) != 2 {
		t.Fatalf("prometheus sources %+v", c.Prometheus)
	}
	for _, p := range c.Prometheus {
		if got := fmt.Sprint(p.GroupBy); got != "[namespace cluster]" {
			t.Errorf("%s: group by %s, want [namespace cluster]", p.URL, got)
		}
	}
}
