// Prints, as one JSON line, the context pi's SessionManager builds from a
// session file and what pi would send of it: the messages (assistant
// messages that stopped "error" or "aborted" dropped, as pi-ai's
// transformMessages drops them), the model and the thinking level.
//
//   node pi-context.mjs SESSION.jsonl
import { readFileSync } from "node:fs";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries } from "@mariozechner/pi-coding-agent";

const entries = parseSessionEntries(readFileSync(process.argv[2], "utf8"));
migrateSessionEntries(entries);
const ctx = buildSessionContext(entries.filter((e) => e.type !== "session"));
const sent = ctx.messages.filter((m) => !(m.role === "assistant" && (m.stopReason === "error" || m.stopReason === "aborted")));
process.stdout.write(JSON.stringify({ messages: sent, model: ctx.model, thinkingLevel: ctx.thinkingLevel }) + "\n");
