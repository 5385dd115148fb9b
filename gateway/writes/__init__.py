"""writes"""
