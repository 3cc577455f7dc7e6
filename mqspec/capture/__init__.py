"""Packet captures: reading pcap and pcapng files, reassembling IP and TCP, framing MQQB, writing captures.

* :mod:`~mqspec.capture.scan`: the directory protocols' messages out of a capture (``mqspec decode
  --pcap``, ``mqspec trace from-pcap``), with a summary that accounts for every frame;
* :mod:`~mqspec.capture.mqqb`: the minimal MQQB UserMessage codec the scan needs;
* :mod:`~mqspec.capture.writer`: captures written from frames (tests, trace tooling).
"""

from mqspec.capture.scan import CaptureError, CaptureSummary, Frame, decode_capture, scan_capture

__all__ = ["CaptureError", "CaptureSummary", "Frame", "decode_capture", "scan_capture"]
