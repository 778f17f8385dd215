// Package schematest checks JSON that ttftop wrote against the schema
// users read, docs/schema/ttftop-v1.schema.json (docs/json.md).
package schematest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// File is the schema's path from the repository root.
const File = "docs/schema/ttftop-v1.schema.json"

// Validate fails t unless doc is valid against the schema's definition
// def ("snapshot", "check", "probe", "probe_request", "replay").
func Validate(t testing.TB, def string, doc []byte) {
	t.Helper()
	if err := Check(def, doc); err != nil {
		t.Errorf("%s JSON does not match %s#/$defs/%s: %v\n%s", def, File, def, err, doc)
	}
}

// Check is Validate's verdict: nil when doc is valid.
func Check(def string, doc []byte) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join(root, File) + "#/$defs/" + def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%#v", err) // every failing keyword, not only the first level
	}
	return nil
}

// repoRoot is the nearest directory above the working directory (a
// package's, under go test) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
