"""The demo's Zeus: a real Celery 5 app on Redis, shaped like the Zeus runbook.

Two uses:
  python3 -m celery -A zeus_demo worker -Q <queues> -n zeus-worker-1@demo   (the live worker)
  python3 zeus_demo.py seed '<json plan>'   (publish tasks that fail for real, wait for their
                                             FAILURE metas, then stop the worker consuming the
                                             queues it should leave alone)

The broker and result backend come from ZEUS_DEMO_BROKER (a redis:// URL with the demo's db).
Task arguments are harmless ids: queue-ops never shows them anyway.
"""

import json
import os
import sys
import time

from celery import Celery

BROKER = os.environ.get("ZEUS_DEMO_BROKER", "redis://127.0.0.1:6379/0")
JOB_SECONDS = float(os.environ.get("ZEUS_DEMO_JOB_SECONDS", "2.5"))

app = Celery("zeus", broker=BROKER, backend=BROKER)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    # name, args, worker, retries and queue in the meta, as the queue-ops DLQ reads them
    result_extended=True,
    task_default_queue="celery",
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
    # `restart zeus/pool` sends pool_restart, which a worker only obeys with this on.
    worker_pool_restarts=True,
)


class OperationalError(Exception):
    """What psycopg2 raises when the database is away."""


@app.task(name="app.tasks.housekeeping.cleanup_sessions")
def cleanup_sessions(batch):
    time.sleep(JOB_SECONDS)


@app.task(name="app.tasks.reports.generate_daily")
def generate_daily(org_id, fail=False):
    if fail:
        raise OperationalError("could not connect to server")
    time.sleep(JOB_SECONDS)


@app.task(
    name="app.tasks.alarm.check_alarms",
    autoretry_for=(ConnectionError,),
    max_retries=1,
    default_retry_delay=0,
)
def check_alarms(device_id, fail=False):
    if fail:
        raise ConnectionError("MQTT broker unreachable")
    time.sleep(JOB_SECONDS)


@app.task(name="app.tasks.notification.send_push")
def send_push(user_id, fail=False):
    if fail:
        raise TimeoutError("FCM UNAVAILABLE: provider timed out")
    time.sleep(JOB_SECONDS)


@app.task(name="app.tasks.ota.push_firmware")
def push_firmware(device_id, fail=False):
    if fail:
        raise TimeoutError("device did not acknowledge chunk 14/32 in 30s")
    time.sleep(JOB_SECONDS)


@app.task(name="app.tasks.measurement.ingest_batch")
def ingest_batch(batch_id, fail=False):
    time.sleep(JOB_SECONDS)


def seed(plan):
    """plan: {"worker": hostname, "failures": [{"queue", "task", "count"}], "keep": [queues]}"""
    sent = []
    for item in plan["failures"]:
        for i in range(item["count"]):
            result = app.send_task(item["task"], args=[f"dev-{i:05d}"], kwargs={"fail": True},
                                   queue=item["queue"])
            sent.append(result)
    deadline = time.time() + 60
    pending = list(sent)
    while pending and time.time() < deadline:
        pending = [r for r in pending if r.state != "FAILURE"]
        if pending:
            time.sleep(0.1)
    if pending:
        print(json.dumps({"ok": False, "error": f"{len(pending)} tasks did not fail in time"}))
        return 1
    keep = set(plan["keep"])
    for queue in plan["queues"]:
        if queue not in keep:
            app.control.cancel_consumer(queue, destination=[plan["worker"]], reply=True, timeout=5)
    print(json.dumps({"ok": True, "failed": len(sent)}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "seed":
        sys.exit(seed(json.loads(sys.argv[2])))
    print(__doc__)
    sys.exit(2)
