package gauge

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// TextEstimator is an Estimator that counts the tokens of text itself: a
// real tokenizer rather than a rule of thumb.
type TextEstimator interface {
	Estimator
	TextTokens(s string) int
}

// Tokenizer counts with an offline BPE vocabulary (OpenAI's o200k or
// cl100k; Anthropic publishes none, and these come within a few percent on
// English and code).
type Tokenizer struct {
	name  string
	codec tokenizer.Codec
}

// NewEstimator returns the estimator a --tokenizer names: chars4 (or ""),
// CharsPer4, else the tokenizer named o200k or cl100k.
func NewEstimator(name string) (Estimator, error) {
	if name == "chars4" || name == "" {
		return CharsPer4{}, nil
	}
	t, err := NewTokenizer(name)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// NewTokenizer returns the tokenizer named o200k or cl100k.
func NewTokenizer(name string) (*Tokenizer, error) {
	var enc tokenizer.Encoding
	switch name {
	case "o200k":
		enc = tokenizer.O200kBase
	case "cl100k":
		enc = tokenizer.Cl100kBase
	default:
		return nil, fmt.Errorf("unknown tokenizer %q (want chars4, o200k or cl100k)", name)
	}
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, err
	}
	return &Tokenizer{name: name, codec: c}, nil
}

func (t *Tokenizer) Name() string { return t.name }

// Tokens falls back to chars/4 where only a count of characters is known.
func (t *Tokenizer) Tokens(chars int) int { return CharsPer4{}.Tokens(chars) }

// TextTokens counts the tokens of s.
func (t *Tokenizer) TextTokens(s string) int {
	n, err := t.codec.Count(s)
	if err != nil {
		return CharsPer4{}.Tokens(len([]rune(s)))
	}
	return n
}

// TextTokens estimates the tokens of s with est.
func TextTokens(est Estimator, s string) int {
	if te, ok := est.(TextEstimator); ok {
		return te.TextTokens(s)
	}
	return est.Tokens(len([]rune(s)))
}
