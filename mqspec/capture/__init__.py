"""Packet captures: reading pcap and pcapng files, reassembling IP and TCP, framing MQQB, writing captures.

The stages, each handing the next one item at a time (memory does not grow with the capture):

* :mod:`~mqspec.capture.reader`: capture files (pcap, pcapng, compressed) frame by frame;
* :mod:`~mqspec.capture.links`: link layers, to the IP packet;
* :mod:`~mqspec.capture.ip`: IPv4/IPv6, UDP and TCP headers, fragment reassembly;
* :mod:`~mqspec.capture.tcp`: TCP reassembly, holes given up and reported;
* :mod:`~mqspec.capture.framing`: MQQB packets cut out of each stream;
* :mod:`~mqspec.capture.mqqb`: the minimal MQQB UserMessage codec;
* :mod:`~mqspec.capture.scan`: the directory protocols' messages as rows, and
  :mod:`~mqspec.capture.summary`: what became of every frame, and the capture's holes;
* :mod:`~mqspec.capture.writer`: captures written from frames (tests, samples, benchmarks).
"""

from mqspec.capture.reader import CaptureError, Frame, read_frames
from mqspec.capture.scan import Ports, Scan, decode_capture, scan_capture, scan_raw
from mqspec.capture.summary import CaptureSummary, Hole

__all__ = ["CaptureError", "CaptureSummary", "Frame", "Hole", "Ports", "Scan", "decode_capture", "read_frames",
           "scan_capture", "scan_raw"]
