import { describe, expect, it } from 'vitest';
import { isOpsError, type OpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';
import { tokenize } from '../../src/pipeline/parse.js';
import { parseCliArgs, parseExportWords, wantsJson } from '../../src/transports/cli/args.js';

describe('the command line splits its own options from the command words', () => {
  it('reads --config, --user and --json before the verb', () => {
    expect(parseCliArgs(['--config', 'q.yml', '-u', 'U0ALICE', '--json', 'status', 'pushizo'])).toEqual({
      config: 'q.yml',
      user: 'U0ALICE',
      json: true,
      help: false,
      words: ['status', 'pushizo'],
    });
  });

  it('refuses a --user that is not a Slack user id, saying what would be valid', () => {
    for (const user of ['bad user', 'alice', 'u0alice', 'S0GROUP', '*']) {
      let refused: unknown;
      try {
        parseCliArgs(['--user', user, 'status']);
      } catch (error) {
        refused = error;
      }
      expect(isOpsError(refused) && refused.code, user).toBe('UsageError');
      const line = messages('en').errors.describe(refused as OpsError);
      expect(line).toContain(`not "${user}"`);
      expect(line).toContain('U… or W…');
    }
    expect(parseCliArgs(['--user=W0GRID1', 'status']).user).toBe('W0GRID1');
  });

  it('gives every word after the verb to the command, flags included, as Slack does', () => {
    expect(parseCliArgs(['revoke', 'zeus', 'abc-123', '--terminate']).words).toEqual([
      'revoke',
      'zeus',
      'abc-123',
      '--terminate',
    ]);
    expect(parseCliArgs(['monitor', '--once']).words).toEqual(['monitor', '--once']);
    // an option of the CLI itself after the verb is the command's word too
    expect(parseCliArgs(['help', '--config', 'x.yml'])).toMatchObject({
      words: ['help', '--config', 'x.yml'],
    });
    expect(parseCliArgs(['help', '--config', 'x.yml']).config).toBeUndefined();
    // Slack's words: the same list for the same line
    expect(tokenize('revoke zeus abc-123 --terminate')).toEqual(['revoke', 'zeus', 'abc-123', '--terminate']);
  });

  it('still takes --json at the end of the line, where scripts put it, unless after --', () => {
    expect(parseCliArgs(['status', '--json'])).toMatchObject({ json: true, words: ['status'] });
    expect(wantsJson(['status', 'pushizo', '--json'])).toBe(true);
    expect(parseCliArgs(['--', 'deny', 'r-1', '--json'])).toMatchObject({
      json: false,
      words: ['deny', 'r-1', '--json'],
    });
    expect(wantsJson(['--', 'deny', 'r-1', '--json'])).toBe(false);
    expect(wantsJson(['--config', '--json'])).toBe(false);
  });

  it('refuses an unknown option before the verb, naming it', () => {
    expect(() => parseCliArgs(['--jsno', 'status'])).toThrow(/Unknown option --jsno/);
    expect(() => parseCliArgs(['--since', 'x', 'audit', 'export'])).toThrow(/Unknown option --since/);
    // A slip of one letter is named with the option it most likely was; a real option out of
    // place is not "meant" as itself.
    const said = (argv: string[]) => {
      try {
        parseCliArgs(argv);
      } catch (error) {
        return (error as OpsError).params.message;
      }
      return undefined;
    };
    expect(said(['--jsn', 'status'])).toBe('Unknown option --jsn. Did you mean --json?');
    expect(said(['--conifg', 'q.yml', 'status'])).toBe('Unknown option --conifg. Did you mean --config?');
    expect(said(['--since', 'x', 'audit', 'export'])).toBe('Unknown option --since.');
  });

  it('audit export reads its own --since from its words', () => {
    expect(parseExportWords(['--since', '2026-11-01T00:00:00Z'])).toEqual({ since: '2026-11-01T00:00:00Z' });
    expect(parseExportWords(['--since=2026-11-01T00:00:00Z'])).toEqual({ since: '2026-11-01T00:00:00Z' });
    expect(parseExportWords([])).toEqual({});
    expect(() => parseExportWords(['--since'])).toThrow(/needs a value/);
    expect(() => parseExportWords(['--until', 'x'])).toThrow(/Unknown option --until/);
  });
});
