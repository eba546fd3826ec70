import type { webApi } from '@slack/bolt';
import type { ReplyFile } from '../../pipeline/types.js';

/**
 * One file into a channel, or into a thread there, with `files.uploadV2`: the Web API client asks
 * `files.getUploadURLExternal` for an upload URL, POSTs the bytes to it, then shares the file with
 * `files.completeUploadExternal`. Errors are thrown to the caller (the outbox retries them).
 */
export async function uploadFile(
  client: webApi.WebClient,
  channel: string,
  file: Pick<ReplyFile, 'filename' | 'title' | 'content'>,
  threadTs?: string,
): Promise<void> {
  const base = { channel_id: channel, file: file.content, filename: file.filename, title: file.title };
  await client.files.uploadV2(threadTs ? { ...base, thread_ts: threadTs } : base);
}
