//go:build integration

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// getCompWordsShim stands in for bash-completion's _get_comp_words_by_ref,
// which cobra's bash script calls when that package is not loaded (it is
// not installed here): cur, prev, words and cword from COMP_WORDS.
const getCompWordsShim = `_get_comp_words_by_ref() {
  words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
  cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
}`

// `ttftop completion bash` is loaded in a real bash, which completes as a
// user's TAB would: the script calls the binary's hidden __complete.
func TestCompletionInBash(t *testing.T) {
	bin := buildTtftop(t)
	script := completionScript(t, bin, "bash")
	for _, c := range []struct{ line, want string }{
		{"ttftop pro", "probe"},
		{"ttftop probe --ap", "--api"},
		{"ttftop probe http://127.0.0.1:1 --max-t", "--max-tokens"},
	} {
		words := strings.Fields(c.line)
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = fmt.Sprintf("%q", w)
		}
		shell := fmt.Sprintf("%s\nsource %q\nCOMP_WORDS=(%s); COMP_CWORD=%d; COMP_LINE=%q; COMP_POINT=${#COMP_LINE}\n"+
			"__start_ttftop\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n",
			getCompWordsShim, script, strings.Join(quoted, " "), len(words)-1, c.line)
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", shell)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", c.line, err, out)
		}
		got := strings.Fields(string(out))
		if !slices.Contains(got, c.want) {
			t.Errorf("%q<TAB>: %q, want %q among them", c.line, got, c.want)
		}
	}
}

// zsh and fish scripts are generated; loaded only where the shell is
// installed (neither is by default here).
func TestCompletionZshFish(t *testing.T) {
	bin := buildTtftop(t)
	for _, sh := range []string{"zsh", "fish"} {
		script := completionScript(t, bin, sh)
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s not installed: script generated, not loaded", sh)
			continue
		}
		load := "source " + script
		if sh == "zsh" {
			load = "autoload -U compinit && compinit -u && " + load
		}
		if out, err := exec.Command(path, "-c", load).CombinedOutput(); err != nil {
			t.Errorf("%s cannot load its script: %v\n%s", sh, err, out)
		}
	}
}

// completionScript writes `ttftop completion SHELL` to a file: non-empty,
// naming ttftop.
func completionScript(t *testing.T, bin, shell string) string {
	t.Helper()
	out, err := exec.Command(bin, "completion", shell).Output()
	if err != nil {
		t.Fatalf("completion %s: %v", shell, err)
	}
	if len(out) < 200 || !strings.Contains(string(out), "ttftop") {
		t.Fatalf("completion %s: %d bytes, ttftop named: %v", shell, len(out), strings.Contains(string(out), "ttftop"))
	}
	path := filepath.Join(t.TempDir(), "ttftop."+shell)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
