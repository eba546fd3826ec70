import { CELERY_FAULT_BACKEND } from './fault-backends.js';
import { describePurgeUnderRedisFault } from './fault-fixture.js';

describePurgeUnderRedisFault(CELERY_FAULT_BACKEND);
