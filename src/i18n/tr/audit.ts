import type { Catalog } from '../catalog.js';

/**
 * Denetim kaydı metinleri: `/queue audit`, denetim kanalı ve `audit verify` gerekçeleri.
 * Gelen değerler kullanıcıdan, Redis'ten ya da depodan gelir: blok oluşturucular kaçışlar.
 */
export const audit: Catalog['audit'] = {
  title: (count: number) => `Denetim kaydı: son ${count} kayıt`,
  empty: 'Denetim kaydı boş: henüz hiçbir şey kaydedilmedi.',
  omitted: (count: number) =>
    `Daha eski ${count} kayıt burada gösterilmiyor; \`queue-ops audit export\` hepsini yazar.`,
  sinceValid: '`2024-05-01T00:00:00Z` gibi bir ISO 8601 zamanı',
  outcomes: {
    ok: 'tamam',
    error: 'hata',
    denied: 'reddedildi',
    requested: 'istendi',
    approved: 'onaylandı',
    rejected: 'geri çevrildi',
    expired: 'süresi doldu',
    done: 'tamamlandı',
    failed: 'başarısız',
    interrupted: 'yarıda kaldı',
  },
  entryText: (seq: number, action: string, outcome: string) => `Denetim #${seq}: ${action} → ${outcome}`,
  entryFooter: (seq: number, hash: string, keyId?: string) =>
    `#${seq} · zincir ${hash}${keyId ? ` · anahtar ${keyId}` : ''}`,
  batchText: (firstSeq: number, lastSeq: number, count: number) =>
    count === 1 ? `Denetim #${firstSeq}` : `Denetim #${firstSeq}–#${lastSeq} (${count} kayıt)`,
  notPosted: (count: number, firstSeq: number, lastSeq: number) =>
    `${count} kayıt buraya gönderilmedi (${firstSeq === lastSeq ? `#${firstSeq}` : `#${firstSeq} ile #${lastSeq} arası`}); depoda duruyor: \`/queue audit\` ya da \`queue-ops audit export\` gösterir.`,
  fields: {
    actor: 'Kim',
    via: 'Kanal türü',
    channel: 'Kanal',
    target: 'Hedef',
    outcome: 'Sonuç',
    error: 'Hata',
    params: 'Parametreler',
  },
  via: { slack: 'Slack', cli: 'komut satırı', console: 'demo konsolu', pagerduty: 'PagerDuty' },
  verify: {
    ok: (count: number) => `Denetim zinciri doğrulandı: ${count} kayıt, kopukluk yok.`,
    bad: (seq: number, reason: string, count: number) =>
      `Denetim zinciri #${seq} numaralı kayıtta kopuk: ${reason}. (Ondan önceki ${count} kayıt doğrulandı.)`,
    reasons: {
      missing: (from: number, to: number) =>
        from === to
          ? `#${from} numaralı kayıt eksik (logdan silinmiş)`
          : `#${from}–#${to} kayıtları eksik (logdan silinmiş)`,
      brokenLink: (prevSeq: number) =>
        prevSeq === 0
          ? 'zinciri başlatması gerekirken daha önceki bir kayda işaret ediyor (kayıtlar silinmiş ya da sırası değişmiş)'
          : `#${prevSeq} numaralı kayda bağlanmıyor (kayıtlar silinmiş, eklenmiş ya da sırası değişmiş)`,
      edited: 'içeriği hash’iyle uyuşmuyor (kayıt değiştirilmiş)',
      tailMissing: (from: number, to: number) =>
        from === to
          ? `en son eklenen #${from} numaralı kayıt eksik (logun sonundan silinmiş)`
          : `en son eklenen #${from}–#${to} kayıtları eksik (logun sonundan silinmiş)`,
      headMismatch: 'zincir başının son olarak kaydettiği kayıt bu değil (logun sonu değiştirilmiş)',
      notAppended: (headSeq: number) =>
        `zincir başından (#${headSeq}) daha yeni, yani bot üzerinden eklenmemiş`,
      keyUnknown: (keyId: string) =>
        `${keyId} denetim anahtarıyla mühürlenmiş, ama bu anahtar burada tanımlı değil (\`audit.previousKeyFiles\` içine ekleyin)`,
      keyMissing: (keyId: string) =>
        `${keyId} denetim anahtarıyla mühürlenmiş, ama burada hiç denetim anahtarı tanımlı değil (QUEUE_OPS_AUDIT_KEY ya da \`audit.keyFile\` ayarlayın)`,
      unkeyedAfterKeyed:
        'önceki kayıtlar anahtarlı olduğu halde bu anahtarsız (denetim anahtarı olmadan yazılmış ya da yeniden yazılmış)',
      unkeyedTail: (from: number, to: number) =>
        `${from === to ? `#${from} numaralı kayıt` : `#${from}–#${to} kayıtları`} bir denetim anahtarı tanımlı olduğu halde anahtarsız: anahtarı olmayan bir süreç yazmış, ya da anahtara sahip olmayan biri yeniden yazmış (anahtar ayarlanmadan önceki kayıtlar, kendilerinden sonraki ilk anahtarlı kayıtla mühürlenir)`,
      witnessMismatch: (witness: string) =>
        `hash’i ${witness} tarafından kaydedilenden farklı (log buradan ya da daha önceden itibaren yeniden yazılmış)`,
      witnessAhead: (witness: string, from: number, to: number) =>
        `${from === to ? `#${from} numaralı kayıt` : `#${from}–#${to} kayıtları`} depoda yok, ama ${witness} #${to} numaralı kaydı tutmuş (zincir başı dahil logun sonundan silinmiş)`,
      witness: {
        file: (path: string) => `tanık dosyası ${path}`,
        channel: (channel: string) => `denetim kanalı ${channel}`,
      },
    },
    keyed: (keyId: string, older: readonly string[]) =>
      `Anahtarlı: kayıtlar ${keyId} denetim anahtarıyla HMAC-SHA256 ile mühürlü${older.length ? ` (eski anahtarlar da kabul ediliyor: ${older.join(', ')})` : ''}; yalnızca anahtarı elinde tutan biri kayıt sahteleyebilir.`,
    unkeyed:
      'Anahtarsız: denetim anahtarı tanımlı değil (QUEUE_OPS_AUDIT_KEY ya da `audit.keyFile`); bu, kazara yapılan değişiklikleri yakalar, veritabanına yazabilen birini değil.',
    witnessesChecked: 'Depo dışındaki tanıklarla karşılaştırıldı:',
    witnessChecked: (witness: string, seq: number) => `${witness}: en yeni kayıt #${seq} eşleşiyor`,
    witnessEmpty: (witness: string) => `${witness}: henüz kayıt yok, karşılaştırılacak bir şey yok`,
    witnessUnreadable: (witness: string, error: string) =>
      `${witness}: okunamadı (${error}), kontrol edilmedi`,
    noWitnesses:
      'Depo dışında tanık tanımlı değil (`audit.witnessFile`, `slack.auditChannel`): zincir başıyla birlikte sondan silinen kayıtlar fark edilmez.',
  },
  keys: {
    source: '`audit:` ve QUEUE_OPS_AUDIT_KEY',
    unreadable: (where: string, path: string, code: string) => `${where}: ${path} okunamıyor (${code})`,
    tooShort: (where: string, min: number) =>
      `${where}: denetim anahtarı en az ${min} karakter olmalı (örneğin \`openssl rand -hex 32\`)`,
    keyedChainNoKey: (keyId: string, seq: number) =>
      `denetim zinciri ${keyId} denetim anahtarıyla mühürlü (kayıt #${seq}) ama burada denetim anahtarı tanımlı değil: QUEUE_OPS_AUDIT_KEY ya da audit.keyFile ayarlayın (anahtarsız yazılan bir kayıt zinciri kalıcı olarak bozar)`,
    twoKeys:
      'QUEUE_OPS_AUDIT_KEY ve audit.keyFile farklı anahtarlar içeriyor: birini ayarlayın (diğeri audit.previousKeyFiles içine girebilir)',
  },
  unkeyedAtStart:
    'Denetim zinciri anahtarsız: veritabanına yazabilen birinin onu fark edilmeden yeniden yazamaması için QUEUE_OPS_AUDIT_KEY ya da audit.keyFile ayarlayın.',
};
