/**
 * The version of the core's rules: what a journaled command does when replayed. Bump it with
 * every change that makes a command replay to another state or answer (docs/decisions.md, "Rule
 * changes and the journal"). Each start journals it (`rules_version`) when it differs from the
 * core's, and recovery refuses to replay commands journaled under another version: a build must
 * not rewrite what an older build acknowledged. 0 stands for the builds before versions.
 */
export const RULES_VERSION = 9;

/** The core command that records the rules the commands after it are journaled under. */
export interface RulesVersionCommand {
  readonly type: 'rules_version';
  readonly seq: number;
  readonly ts: number;
  readonly version: number;
}

export const isRulesVersion = (command: { readonly type: string }): command is RulesVersionCommand =>
  command.type === 'rules_version';
