"""The Renyi orders every RDP curve of the package is tabulated on.

``ORDERS``: the integers 2 ... 64, then a geometric grid up to 1024 (read-only);
``COARSE_ORDERS``: the subset ``renyi.minimise_over_orders`` evaluates first.
"""

import numpy as np

ORDERS = np.concatenate(
    [
        np.arange(2.0, 65.0),
        [72.0, 80.0, 90.0, 100.0, 112.0, 128.0, 144.0, 160.0, 180.0, 200.0, 224.0, 256.0],
        [288.0, 320.0, 360.0, 400.0, 448.0, 512.0, 640.0, 768.0, 896.0, 1024.0],
    ]
)
ORDERS.setflags(write=False)
COARSE_ORDERS = (2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 90, 128, 180, 256, 360, 512, 768, 1024)
