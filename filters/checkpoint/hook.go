package checkpoint

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/bstools/bs/internal/jsonerr"
)

// Hook is the JSON Claude Code sends a hook command on standard input.
type Hook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	HookEventName  string `json:"hook_event_name"`
	Trigger        string `json:"trigger"` // PreCompact: manual or auto
	Source         string `json:"source"`  // SessionStart: startup, resume, clear or compact
}

// ReadHook decodes a hook event; its error words what is wrong with the
// JSON (jsonerr.Words).
func ReadHook(r io.Reader) (Hook, error) {
	var h Hook
	if err := json.NewDecoder(r).Decode(&h); err != nil {
		return h, errors.New(jsonerr.Words(err))
	}
	return h, nil
}

// The hook events that lack what they need.
var (
	// ErrHookNoSession is a SessionStart with no session key.
	ErrHookNoSession = errors.New("no session key")
	// ErrHookNoTranscript is an event that checkpoints with no
	// transcript_path.
	ErrHookNoTranscript = errors.New("no transcript_path")
)

// HookResult is what a hook event came to.
type HookResult struct {
	// Context is the text for Claude Code to add to the context (see
	// WriteHookContext): the agent's notice of its context, and at
	// SessionStart the latest checkpoint's text. "" for none.
	Context string
	// Ran is the checkpoint run over the transcript, when one ran.
	Ran *Outcome
	// Failed is a checkpoint that could not be written when the event's
	// other work was still done: the agent still gets its notice.
	Failed *Error
}

// Handle acts on a hook event with opt (opt.SessionKey the session's key):
// PreCompact writes a checkpoint of the transcript (trigger compaction),
// SessionEnd writes one (trigger session-end), Stop, SubagentStop and
// UserPromptSubmit write one at the threshold; UserPromptSubmit and
// SessionStart give the context to add. Other events do nothing.
func (h Hook) Handle(opt Options) (HookResult, error) {
	var res HookResult
	switch h.HookEventName {
	case "SessionStart":
		return h.sessionStart(opt)
	case "PreCompact":
		opt.Trigger = TriggerCompaction
	case "SessionEnd":
		opt.Trigger = TriggerSessionEnd
	case "Stop", "SubagentStop", "UserPromptSubmit":
	default:
		return res, nil // not an event checkpoints act on
	}
	if h.TranscriptPath == "" {
		return res, ErrHookNoTranscript
	}
	out, err := runFile(h.TranscriptPath, opt)
	var cpErr *Error
	if h.HookEventName == "UserPromptSubmit" && errors.As(err, &cpErr) {
		// The agent still gets its gauge (without "Checkpoint saved"):
		// Claude Code reads the output of a hook that succeeds.
		res.Failed = cpErr
		err = nil
	} else if err == nil {
		res.Ran = &out
	}
	if err != nil {
		return res, err
	}
	if h.HookEventName == "UserPromptSubmit" {
		// Seed 003 §6.3: the agent sees its gauge from 70%, and at the
		// threshold that its state is checkpointed. Claude Code adds a
		// UserPromptSubmit hook's additionalContext to the context.
		res.Context = out.Notice
	}
	return res, nil
}

// sessionStart gives a session resumed full its notice, and after a
// compaction (or on a resume) the latest checkpoint's text.
func (h Hook) sessionStart(opt Options) (HookResult, error) {
	var res HookResult
	if opt.SessionKey == "" {
		return res, ErrHookNoSession
	}
	var text []string
	if h.TranscriptPath != "" {
		out, err := runFile(h.TranscriptPath, opt)
		var cpErr *Error
		switch {
		case errors.As(err, &cpErr):
			res.Failed = cpErr
		case errors.Is(err, os.ErrNotExist): // a new session: no transcript yet
		case err != nil:
			return res, err
		default:
			res.Ran = &out
		}
		if out.Notice != "" {
			text = append(text, out.Notice)
		}
	}
	latest, _, err := opt.Dir.LatestText(opt.SessionKey)
	switch {
	case err == nil:
		text = append(text, latest)
	case !errors.Is(err, ErrNone):
		return res, err
	}
	res.Context = strings.Join(text, "\n\n")
	return res, nil
}

// runFile takes the checkpoint opt asks for of the transcript at path.
func runFile(path string, opt Options) (Outcome, error) {
	f, err := os.Open(path)
	if err != nil {
		return Outcome{}, err
	}
	defer f.Close()
	return Run(path, f, io.Discard, opt)
}

// WriteHookContext writes text the way Claude Code takes a hook's output
// into the context: {"hookSpecificOutput":{"hookEventName":…,
// "additionalContext":…}}. Nothing for no text.
func WriteHookContext(w io.Writer, event, text string) error {
	if text == "" {
		return nil
	}
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{event, text}})
}
