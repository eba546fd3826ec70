import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createIdleCollector } from '../../src/lib/idle-collector.js';

describe('idle collector: one collection once the bot has gone quiet after commands', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const collector = (collect = vi.fn()) => ({
    collect,
    idle: createIdleCollector({ idleMs: 5_000, collect, now: () => Date.now() }),
  });

  it('collects once, idleMs after the last of a burst of commands', () => {
    const { collect, idle } = collector();
    for (let i = 0; i < 100; i++) {
      idle.began();
      vi.advanceTimersByTime(30);
      idle.ended();
    }
    vi.advanceTimersByTime(4_999);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    // Idle hours later: nothing more until the next command.
    vi.advanceTimersByTime(3_600_000);
    expect(collect).toHaveBeenCalledTimes(1);
    idle.began();
    idle.ended();
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('waits for quiet: a command ending 3 s into the wait moves the collection 5 s past it', () => {
    const { collect, idle } = collector();
    idle.began();
    idle.ended();
    vi.advanceTimersByTime(3_000);
    idle.began();
    idle.ended();
    vi.advanceTimersByTime(2_000);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(3_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('never collects while a command is still running (a long purge), only after it ends', () => {
    const { collect, idle } = collector();
    idle.began();
    idle.ended();
    idle.began(); // a purge that runs a minute
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();
    idle.ended();
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it('does nothing before any command, after stop, or without gc (node started without --expose-gc)', () => {
    const { collect, idle } = collector();
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();
    idle.began();
    idle.ended();
    idle.stop();
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();

    const without = createIdleCollector({ idleMs: 5_000, collect: undefined });
    without.began();
    without.ended();
    expect(vi.getTimerCount()).toBe(0);
  });
});
