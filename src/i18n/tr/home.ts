import type { Catalog } from '../catalog.js';

/** App Home sekmesi. Gelen değerler config, Redis ya da depodan gelir: builder kaçışlar. */
export const home: Catalog['home'] = {
  title: 'Queue Ops',
  updated: (at: string) => `Güncellendi: ${at}. Buradaki bir şey değiştiğinde kendini yeniler.`,
  systems: 'Sistemler',
  systemLine: (name: string, type: string, queues: number, waiting: string, failed: string, paused: number) =>
    `${name} (${type}): ${queues} kuyruk, ${waiting} bekleyen, ${failed} başarısız${paused > 0 ? `, ${paused} duraklatılmış` : ''}`,
  systemDown: (name: string, code: string) => `${name}: ulaşılamıyor (${code})`,
  noSystems: 'Tanımlı sistem yok.',
  alerts: 'Açık alarmlar',
  noAlerts: 'Aktif alarm yok.',
  alertLine: (severity: string, rule: string, subject: string, since: string, acked?: string) =>
    `${severity} · ${subject} üzerinde ${rule}, ${since} itibarıyla aktif${acked ? ` · üstlenen: ${acked}` : ''}`,
  waiting: 'Onayınızı bekleyenler',
  noWaiting: 'Sizi bekleyen bir şey yok.',
  requestLine: (id: string, action: string, target: string, by: string, expires: string) =>
    `${id}: ${action} ${target}, isteyen ${by}; son geçerlilik ${expires}`,
  moreRequests: (count: number) => `${count} istek daha bekliyor: \`/queue pending\` hepsini listeler.`,
  recent: 'Son işlemleriniz',
  noRecent: 'Son zamanlarda bir şey istemediniz ya da onaylamadınız.',
  moreAlerts: (count: number) => `${count} tane daha: \`/queue alerts\` hepsini listeler.`,
  silences: 'Geçerli susturmalar',
  silenceLine: (id: string, pattern: string, until: string, by: string, reason?: string) =>
    `${id}: ${pattern}, ${until} saatine kadar, ${by}${reason ? ` · ${reason}` : ''}`,
  moreSilences: (count: number) => `${count} tane daha: \`/queue silences\` hepsini listeler.`,
};
