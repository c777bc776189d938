while True:
    print("spam " * 100)
