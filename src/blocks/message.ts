import type { KnownBlock } from '@slack/types';

/** What every builder returns: the notification fallback text and the blocks. */
export interface Message {
  text: string;
  blocks: KnownBlock[];
}

export type { KnownBlock };
