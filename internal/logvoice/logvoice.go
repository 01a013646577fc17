// Package logvoice gives bs's logs one voice with its messages: a record
// at warn or above is a warning as the messages say one ("bs: warning:
// what happened (key=value, …)"), since a person reads it at the default
// level; records below it, which only --log-level info or debug shows,
// are slog's text lines, for grep and log collectors.
package logvoice

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// Handler writes the records below warn as text to w, and has warn say
// those at warn and above, one line each: the message and its attributes.
type Handler struct {
	text  slog.Handler // the records below warn
	warn  func(line string)
	mu    *sync.Mutex
	attrs []slog.Attr
}

// New is a Handler of the records at level and above.
func New(w io.Writer, level slog.Level, warn func(line string)) *Handler {
	return &Handler{text: slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}), warn: warn, mu: &sync.Mutex{}}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.text.Enabled(ctx, l)
}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.text.Handle(ctx, r)
	}
	var fields []string
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if v == "" {
			return true // nothing to say
		}
		if strings.ContainsAny(v, " \t\n\"=,") {
			v = strconv.Quote(v)
		}
		fields = append(fields, a.Key+"="+v)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := r.Message
	if len(fields) > 0 {
		line += " (" + strings.Join(fields, ", ") + ")"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.warn(line)
	return nil
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.text = h.text.WithAttrs(attrs)
	c.attrs = append(append([]slog.Attr{}, h.attrs...), attrs...)
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	c := *h
	c.text = h.text.WithGroup(name)
	return &c
}
