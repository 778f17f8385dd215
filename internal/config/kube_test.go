package config

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/sources/kube"
)

// TestKubeSection: the file's kube: section fills sources/kube's
// settings; a misspelt key is refused with its line.
func TestKubeSection(t *testing.T) {
	c, err := Parse(strings.NewReader("kube:\n  enabled: true\n  context: prod\n  namespace: llm\n  selector: team=search\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := kube.Settings{Enabled: true, Context: "prod", Namespace: "llm", Selector: "team=search"}
	if c.Kube != want {
		t.Errorf("kube section %+v; want %+v", c.Kube, want)
	}
	_, err = Parse(strings.NewReader("kube:\n  enabled: true\n  namespaces: llm\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), `unknown key "namespaces"`) {
		t.Errorf("misspelt key: %v; want it refused with its line", err)
	}
}
