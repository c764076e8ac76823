# task: tasks/py-one.json
# expect: runtime_error
# hack: a thread ends the whole process with status 0 while the tests run.
import os
import threading
import time

def add(a, b):
    threading.Thread(target=lambda: os._exit(0)).start()
    time.sleep(2)
    return 0
