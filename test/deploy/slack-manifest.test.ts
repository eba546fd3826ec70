import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * Slack reads manifest.yml when someone creates the app from it; nothing here can. So the file is
 * checked for what the bot relies on: the Home tab and its event, the scopes of the Web API calls
 * it makes, and the HTTP-mode variant in its comment keeping all of that too.
 */
interface Manifest {
  features: {
    app_home?: { home_tab_enabled?: boolean };
    slash_commands: { command: string; url?: string }[];
  };
  oauth_config?: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { bot_events: string[]; request_url?: string };
    interactivity: { is_enabled: boolean; request_url?: string };
    socket_mode_enabled: boolean;
  };
}

const text = readFileSync(join(import.meta.dirname, '../../manifest.yml'), 'utf8');
const manifest = parse(text) as Manifest;
/** The HTTP-mode parts, as the comment at the end of the file gives them, uncommented. */
const commented = text.slice(text.indexOf('\n# features:') + 1).split('\n');
const httpParts = parse(
  commented
    // The block ends at its first bare `#` line.
    .slice(0, commented.indexOf('#'))
    .map((line) => line.replace(/^# ?/, ''))
    .join('\n'),
) as Pick<Manifest, 'features' | 'settings'>;

describe('manifest.yml', () => {
  it('enables the Home tab and subscribes to app_home_opened (Socket Mode)', () => {
    expect(manifest.features.app_home?.home_tab_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toContain('app_home_opened');
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/queue']);
  });

  it('asks for the scopes of the Web API calls the bot makes, and not chat:write.public', () => {
    const scopes = manifest.oauth_config!.scopes.bot;
    for (const scope of [
      'commands',
      'chat:write',
      'users:read',
      'usergroups:read',
      'files:write',
      'im:write',
      // conversations.members / conversations.info: the Home tab and private channels.
      'channels:read',
      'groups:read',
    ])
      expect(scopes, scope).toContain(scope);
    expect(scopes).not.toContain('chat:write.public');
  });

  it('keeps the Home tab and its event in the HTTP-mode variant, all on /slack/events', () => {
    expect(httpParts.features.app_home?.home_tab_enabled).toBe(true);
    expect(httpParts.settings.event_subscriptions.bot_events).toContain('app_home_opened');
    expect(httpParts.settings.socket_mode_enabled).toBe(false);
    const urls = [
      httpParts.features.slash_commands[0]?.url,
      httpParts.settings.event_subscriptions.request_url,
      httpParts.settings.interactivity.request_url,
    ];
    for (const url of urls) expect(url).toMatch(/\/slack\/events$/);
  });
});
