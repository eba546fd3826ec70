import type { Catalog } from '../catalog.js';

export const queueContext: Catalog['queueContext'] = {
  owner: (who: string) => `Sahibi ${who}`,
  runbook: 'runbook',
  dashboard: 'pano',
  notes: (text: string) => text,
  statusLine: (queues: string, context: string) => `${queues} · ${context}`,
  statusHeading: '*İşaretli kuyruklar: sahipleri*',
  owners: (mentions: string) => `Sahipler: ${mentions}`,
  alertJobHint: (command: string) =>
    `Başarısız bir işin tamamı: *DLQ’yu göster* id’lerini listeler, ardından \`${command}\``,
};
