package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// keyLine is the line of the key (or list item) at path in doc, a string
// per mapping key and an int per list index. A missing key (a value
// inherited from a default) gives the line of the deepest part found; a
// missing list item (an entry added from flags, not the file) gives 0, as
// does a config without a document.
func keyLine(doc *yaml.Node, path ...any) int {
	line, _ := findKey(doc, path...)
	return line
}

// findKey is keyLine, and whether the whole path is in doc.
func findKey(doc *yaml.Node, path ...any) (line int, found bool) {
	if doc == nil {
		return 0, false
	}
	n := doc
	for _, p := range path {
		for n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		next := (*yaml.Node)(nil)
		switch k := p.(type) {
		case string:
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, next = n.Content[i].Line, n.Content[i+1]
					break
				}
			}
		case int:
			if n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return 0, false
			}
			next = n.Content[k]
			line = next.Line
		}
		if next == nil {
			return line, false
		}
		n = next
	}
	return line, true
}

// inFile reports whether the key at path is written in the config's file.
func (c *Config) inFile(path ...any) bool {
	_, found := findKey(c.doc, path...)
	return found
}

// at prefixes msg with "line N: " when the config came from a file and
// path is in it.
func (c *Config) at(msg string, path ...any) string {
	if l := keyLine(c.doc, path...); l > 0 {
		return fmt.Sprintf("line %d: %s", l, msg)
	}
	return msg
}
