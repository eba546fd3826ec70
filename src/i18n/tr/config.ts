import type { Catalog } from '../catalog.js';

/** Geçersiz bir config dosyasına söylenenler: yolundan sonra her sorun bir satır. */
export const config: Catalog['config'] = {
  redisUrl: 'bir redis:// ya da rediss:// adresi olmalı',
  watchedRedisUrl: 'bir redis://, rediss:// ya da sentinel:// adresi olmalı',
  unreadableRedisUrl:
    'Redis istemcisinin okuyabileceği bir adres değil: kullanıcı adı ve paroladaki # / ? @ % ve boşlukları yüzde kodlamasıyla yazın (# için %23, / için %2F, ? için %3F, @ için %40, % için %25, boşluk için %20)',
  hostPort: 'host:port biçiminde olmalı',
  slackChannelId: 'bir Slack kanal kimliği olmalı',
  queueName: '"/" ve boşluk içermeyen bir kuyruk adı olmalı',
  queueEntry: 'bir kuyruk adı ya da { name, owner, runbook, dashboard, notes } olmalı',
  owner: 'bir Slack kullanıcı grubu kimliği (S…) ya da kullanıcı kimliği (U…/W…) olmalı',
  httpsUrl: 'bir https:// adresi olmalı (en çok 500 karakter; boşluk, "<", ">" ya da "|" olmadan)',
  name: 'harf, rakam, "-", "_" ya da "." ile yazılmış bir ad olmalı',
  groupName: 'harf, rakam, "-", "_" ya da "." ile yazılmış bir grup adı olmalı',
  kubernetesName: 'bir Kubernetes adı olmalı (küçük harf, rakam, "-")',
  workerGroupType: 'type şunlardan biri olmalı: kubernetes, compose ya da celery-pool',
  invalidWorkerGroup: 'geçersiz worker grubu',
  minAboveMax: 'min, max değerinden büyük olamaz',
  systemType: 'type şunlardan biri olmalı: bullmq ya da celery',
  invalidSystem: 'geçersiz sistem',
  principal: '"*", bir Slack kullanıcı kimliği (U…/W…) ya da kullanıcı grubu kimliği (S…) olmalı',
  slackUserId: 'bir Slack kullanıcı kimliği (U…/W…) olmalı',
  osAccount: 'boşluk ya da ":" içermeyen bir işletim sistemi hesabı adı olmalı',
  duration: '30s, 2m ya da 1h gibi bir süre olmalı',
  queuePattern: '"system/queue-*" ya da "*" gibi bir desen olmalı',
  metric: (metrics: string) => `şunlardan biri olmalı: ${metrics}`,
  aboveOrBelow: '`above` ve `below` alanlarından tam olarak biri verilmeli',
  whenNeedsQueueMetric: '`when` koşulları aynı kuyruk içindir: kuralın metriği bir kuyruk metriği olmalı',
  pagerName: 'çağrı cihazı adı: harf, rakam, `.`, `_` ya da `-`, en çok 63',
  pagerUrl: 'http(s):// ile başlayan bir adres',
  pagerKeyFromEnv: `anahtarı dosyaya yazmayın, ortam değişkeni olarak verin (\`"\${PD_ROUTING_KEY}"\`)`,
  duplicatePager: (name: string, first: string) =>
    `"${name}" çağrı cihazı adı iki kez kullanılmış (ayrıca ${first})`,
  duplicateRule: (name: string) => `"${name}" kural adı iki kez kullanılmış`,
  groupBy: '`none` ya da şunlardan oluşan bir liste bekleniyordu: cause, system, severity, rule, queue',
  storeUrl: 'sqlite:<yol> ya da postgres://… olmalı',
  noSystems: 'en az bir sistem tanımlanmalı',
  sentinelName: 'Sentinel master adı gerekli (sentinel.name ya da adresin yolu: sentinel://h:26379/mymaster)',
  clusterPrefix: (prefix: string) =>
    `Redis Cluster üzerinde BullMQ'nun istediği gibi {hash-tag} önekli olmalı (ör. "{${prefix}}")`,
  sentinels: 'sentinels gerekli: [host:port, …] (ya da redis alanında bir sentinel:// adresi)',
  duplicateSystem: (name: string, first: string) =>
    `"${name}" sistem adı iki kez kullanılmış (ilki ${first})`,
  celeryPoolOnBullmq:
    'celery-pool grupları yalnızca celery sistemlerinde olur; kubernetes ya da compose olmalı',
  unknownKey: 'bilinmeyen anahtar',
  notYaml: (reason: string) => `geçerli bir YAML değil: ${reason}`,
  envNotSet: (name: string) => `\${${name}} ortamda tanımlı değil`,
  cannotRead: (path: string, reason: string) => `${path} okunamadı: ${reason}`,
};
