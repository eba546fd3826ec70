import type { Catalog } from '../catalog.js';

/** Slack transport'unun kendi sözleri: tanımadığı butonlar ve başlangıç sorunları. */
export const slack: Catalog['slack'] = {
  unknownAction:
    'Bu buton queue-ops’un tanıdığı bir buton değil, hiçbir şey yapılmadı. Neyin çalıştığını görmek için `/queue help` yazın.',
  missingEnv: (names: readonly string[]) =>
    `queue-ops Slack uygulamasını başlatamıyor: ${names.join(', ')} ayarlı değil.`,
  noTransport:
    'Slack’e bağlanmak için SLACK_APP_TOKEN (Socket Mode) ya da SLACK_SIGNING_SECRET (HTTP) ayarlayın; queue-ops’u Slack olmadan denemek için `npm run demo` çalıştırın.',
  badApiUrl: (value: string) =>
    `queue-ops Slack uygulamasını başlatamıyor: SLACK_API_URL (${value}) bir http(s) URL’i değil.`,
  badPort: (value: string) =>
    `queue-ops Slack uygulamasını başlatamıyor: PORT (${value}) bir port numarası değil.`,
  configInvalid: 'queue-ops başlamadı: config dosyasında sorunlar var.',
  started: (mode: 'socket' | 'http', port: number | undefined) =>
    mode === 'socket'
      ? 'queue-ops Slack’e bağlandı (Socket Mode).'
      : `queue-ops Slack’i ${port} portunda /slack/events adresinde dinliyor.`,
  startFailed: (reason: string) => `queue-ops Slack uygulamasını başlatamadı: ${reason}`,
  tokenRefused: (variable: 'SLACK_BOT_TOKEN' | 'SLACK_APP_TOKEN', error: string) =>
    `queue-ops başlamadı: Slack ${variable} değerini reddetti (${error}). ${
      variable === 'SLACK_BOT_TOKEN'
        ? 'Uygulamanın güncel Bot User OAuth Token’ını (OAuth & Permissions, xoxb-…) ayarlayın.'
        : 'connections:write yetkili bir uygulama düzeyi token (Basic Information, xapp-…) ayarlayın.'
    }`,
  tokenUnchecked: (variable: 'SLACK_BOT_TOKEN' | 'SLACK_APP_TOKEN', reason: string) =>
    `queue-ops başlamadı: Slack ${variable} değerini kabul edip etmediğini yanıtlamadı (${reason}); SLACK_API_URL’i, ağı ve Slack’in durumunu kontrol edin.`,
  waitingForSlack: (method: string, url: string, reason: string, seconds: number) =>
    `queue-ops Slack’i bekliyor: ${url} adresindeki ${method} çağrısı yanıt almadı (${reason}); ${seconds} sn sonra yeniden denenecek. Bu arada /healthz 200, /readyz 503 yanıtlar.`,
  slackAnswered: 'Slack yanıt verdi; queue-ops başlıyor.',
  storeFailed: (reason: string) => `queue-ops başlamadı: ${reason}`,
  inviteForUpdates:
    'İstek yukarıda gönderildi, ama queue-ops bu kanalın üyesi değil; bu yüzden istek süresi dolduğunda ya da yazılı bir komutla onaylandığında o mesaj güncellenemez. Güncellemeleri yerinde görmek için botu davet edin (`/invite @queue-ops`); `/queue pending` her zaman güncel durumu gösterir.',
};
