package engines

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Every engine's spec says where its names come from (a capture, the
// engine's source at a commit, or its documentation): the doc comment of
// each func returning a Spec in table.go has a "Source:" paragraph, and
// every spec of All is built by one of them.
func TestEverySpecNamesItsSource(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "table.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	builders := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
			continue
		}
		if id, ok := fn.Type.Results.List[0].Type.(*ast.Ident); !ok || id.Name != "Spec" {
			continue
		}
		builders++
		if fn.Doc == nil || !strings.Contains(fn.Doc.Text(), "Source:") {
			t.Errorf("%s: no \"Source:\" in its doc comment", fn.Name.Name)
		}
	}
	if builders != len(All()) {
		t.Errorf("%d spec builders in table.go, %d specs in All()", builders, len(All()))
	}
}
