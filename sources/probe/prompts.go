package probe

import (
	"fmt"
	"strings"
)

// Built-in prompts. All ask for open-ended prose so that a model rarely
// stops before max tokens: a probe wants a predictable output length.
const (
	promptShort  = "Tell a story about a lighthouse keeper who finds a message in a bottle. Write at least three paragraphs."
	promptMedium = "You are helping to write a travel guide. Describe, in flowing prose and without lists, " +
		"a full day walking through an old harbour town: the fish market at dawn, the narrow streets " +
		"climbing the hill, the church with its painted ceiling, a long lunch by the water, the museum of " +
		"maritime history, the lighthouse at the end of the pier, the ferry crossing at sunset and the " +
		"evening in a small restaurant where the owner tells stories about storms and shipwrecks. Mention " +
		"the sounds, smells and colours of each place, the people met along the way and the small " +
		"surprises of the day. Write at least ten paragraphs."
)

// longPromptParagraphs sets the size of the long prompt: about 2,000
// tokens, enough for prefill to show in TTFT.
const longPromptParagraphs = 24

// BuiltinPrompts returns the named prompts (a fresh map: callers may keep it).
func BuiltinPrompts() map[string]string {
	return map[string]string{"short": promptShort, "medium": promptMedium, "long": longPrompt()}
}

func longPrompt() string {
	var b strings.Builder
	b.WriteString("Read the following notes from a harbour master's logbook, then write a detailed story that uses every entry.\n\n")
	for i := 1; i <= longPromptParagraphs; i++ {
		fmt.Fprintf(&b, "Entry %d. At first light the tide was %d centimetres above the mark; the wind came from the "+
			"%s at %d knots. The fishing boats left in the order they had arrived the evening before, and the "+
			"ferry was %d minutes late because of fog over the outer rocks. A cargo ship waited at anchor for "+
			"the pilot, who came aboard at the change of the watch. In the afternoon the harbour master walked "+
			"the length of the pier, counted the lamps that needed repair and noted %d of them in this log.\n\n",
			i, 40+i*7%60, []string{"north", "north-west", "west", "south-west", "south", "east"}[i%6], 5+i%17, i%23, i%5+1)
	}
	b.WriteString("Now write the story, in the first person, as the harbour master.")
	return b.String()
}
