import type { Catalog } from '../catalog.js';

/** Komut satırının kendi sözleri: kullanım, seçenek sorunları, config sorunları, buton ipucu. */
export const cli: Catalog['cli'] = {
  usage: [
    'Kullanım: queue-ops [--config DOSYA] [--user KULLANICI_ID] [--json] </queue sonrasındaki kelimeler>',
    '',
    '  --config DOSYA  config dosyası (varsayılan: $QUEUE_OPS_CONFIG, yoksa ./queue-ops.yml)',
    '  --user ID       bu Slack kullanıcısı olarak çalış (varsayılan: cli:<OS kullanıcınız>)',
    '  --json          tek bir JSON nesnesi yaz {ok, message: {text, blocks}, data}',
    '  -h, --help      bu metin',
    '',
    'Seçenekler komuttan önce gelir; komuttan sonraki kelimeler, seçenekler dahil, komutun kendisinindir',
    '(`queue-ops audit export --since ISO`). `--json` sonda da çalışır.',
    '',
    'Örnekler: queue-ops status   queue-ops dlq pushizo/dispatch-ios 20   queue-ops --json workers zeus',
    '          queue-ops monitor --once   (tek bir alarm turu: örnekle, alarm ver, gönder; cron için)',
    'Çıkış kodları: 0 başarılı, 1 komut başarısız (bilinmeyen kuyruk, Redis kapalı), 2 kullanım ya da config hatası.',
  ].join('\n'),
  unknownFlag: (flag: string) => `Bilinmeyen seçenek ${flag}.`,
  unknownFlagSuggest: (flag: string, likely: string) =>
    `Bilinmeyen seçenek ${flag}. ${likely} mi demek istediniz?`,
  flagNeedsValue: (flag: string) => `${flag} seçeneği bir değer ister.`,
  badUser: (value: string) =>
    `--user bir Slack kullanıcı kimliği olmalı (roles: içindeki gibi U… ya da W…), "${value}" değil.`,
  configInvalid: (source: string) => `queue-ops: ${source} içindeki config geçerli değil:`,
  storeUnavailable: (reason: string) =>
    `${reason} Salt okunur komutlar yine çalışır; eylemler, onaylar ve denetim kaydı depoya ihtiyaç duyar.`,
  unexpectedFailure: (reason: string) => `queue-ops: beklenmeyen hata: ${reason}`,
  /** A request whose process died (approved but never started, or mid-action), reported at the next start. */
  recovered: (id: string, action: string, target: string, error: string) =>
    `queue-ops: istek ${id} (${action} ${target}): ${error}`,
  /** A read-only command answered first; a purge (or undo) a dead process left is finished now. */
  finishingAfter: (verb: string, kind: 'purge' | 'undo', id: string, target: string) =>
    `queue-ops: önce \`${verb}\` yanıtlandı; ölen bir sürecin yarım bıraktığı ${id} ${kind === 'purge' ? 'temizlemesi' : 'temizlemesinin geri alınması'} (${target}) şimdi tamamlanıyor.`,
  buttonsHeader: 'Bir butona basmak için şunu çalıştırın:',
  button: (index: number, command: string) => `  [${index}] ${command}`,
};
