package config

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports point one way: the commands and internal/monitor read the
// config file, and every part below them (sources, views, the domain)
// owns its settings and defaults, so none of them imports this package.
func TestNothingBelowTheMonitorImportsConfig(t *testing.T) {
	const self = "github.com/ttftop/ttftop/internal/config"
	root := filepath.Join("..", "..")
	above := []string{"cmd", "bench", filepath.Join("internal", "monitor"), filepath.Join("internal", "config")}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			for _, a := range above {
				if rel == a {
					return filepath.SkipDir
				}
			}
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports internal/config: move the fact it reads to the package that owns it", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files: not the repository", files)
	}
}
