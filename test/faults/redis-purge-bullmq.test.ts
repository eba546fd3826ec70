import { BULLMQ_FAULT_BACKEND } from './fault-backends.js';
import { describePurgeUnderRedisFault } from './fault-fixture.js';

describePurgeUnderRedisFault(BULLMQ_FAULT_BACKEND);
