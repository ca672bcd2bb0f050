"""Calibration tools for the camera reader: build the `rank-suit` model from reference
photos of the table's own deck (`station calibrate camera`), measure it on labelled
photos (`station calibrate report`), check the region of interest and the passage
thresholds on a short clip (`station calibrate clip`), and make test footage from real
card designs (`calibration.synthetic`)."""
